import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('evaluations', '0014_idempotency_records'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='Confirmation',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('subject', models.CharField(max_length=80)),
                ('owner_team', models.CharField(blank=True, choices=[('platform', 'Platform'), ('ops', 'Operations'), ('procurement', 'Procurement'), ('business', 'Business'), ('architecture', 'Architecture'), ('observer', 'Observer')], max_length=20, verbose_name='owning team')),
                ('due', models.DateField(blank=True, null=True, verbose_name='due')),
                ('request', models.TextField(blank=True, verbose_name='request sent')),
                ('requested_at', models.DateField(blank=True, null=True, verbose_name='sent on')),
                ('closed_at', models.DateTimeField(blank=True, null=True)),
                ('closing_reference', models.CharField(blank=True, max_length=300, verbose_name='closed by')),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('updated_at', models.DateTimeField(auto_now=True)),
                ('candidate', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='confirmations', to='evaluations.candidate')),
                ('closed_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('owner', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL, verbose_name='owner')),
                ('project', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='evaluations.project')),
            ],
            options={
                'verbose_name': 'confirmation',
                'ordering': ['due', 'pk'],
                'constraints': [models.UniqueConstraint(condition=models.Q(('closed_at__isnull', True)), fields=('candidate', 'subject'), name='confirmation_one_open')],
            },
        ),
        migrations.CreateModel(
            name='TermEntry',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('key', models.CharField(max_length=40, verbose_name='term')),
                ('value', models.JSONField(blank=True, null=True)),
                ('basis', models.CharField(choices=[('quote', 'vendor quote'), ('list_price', 'published: list price or public terms'), ('estimate', 'our estimate'), ('tbc', 'to be confirmed')], default='tbc', max_length=20, verbose_name='basis')),
                ('reference', models.CharField(blank=True, max_length=300, verbose_name='reference')),
                ('source', models.CharField(blank=True, max_length=500, verbose_name='where it was read')),
                ('valid_until', models.DateField(blank=True, null=True, verbose_name='valid until')),
                ('reason', models.TextField(blank=True, verbose_name='why')),
                ('current', models.BooleanField(default=True)),
                ('recorded_at', models.DateTimeField()),
                ('candidate', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='terms', to='evaluations.candidate')),
                ('previous', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='procurement.termentry')),
                ('project', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='evaluations.project')),
                ('recorded_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'verbose_name': 'term entry',
                'ordering': ['-recorded_at', '-pk'],
                'indexes': [models.Index(fields=['project', 'current'], name='term_project_current')],
                'constraints': [models.UniqueConstraint(condition=models.Q(('current', True)), fields=('candidate', 'key'), name='term_one_current')],
            },
        ),
    ]
