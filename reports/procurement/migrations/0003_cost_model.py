import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('evaluations', '0014_idempotency_records'),
        ('procurement', '0002_former_boundaries'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='CostModel',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('currency', models.CharField(default='USD', max_length=3, verbose_name='currency')),
                ('horizon_years', models.PositiveSmallIntegerField(default=5, verbose_name='horizon (years)')),
                ('discount_rate_percent', models.DecimalField(blank=True, decimal_places=4, max_digits=7, null=True, verbose_name='discount rate (%)')),
                ('gpus', models.DecimalField(decimal_places=4, default=0, max_digits=18, verbose_name='GPUs')),
                ('nodes', models.DecimalField(decimal_places=4, default=0, max_digits=18, verbose_name='nodes')),
                ('cores_per_node', models.DecimalField(decimal_places=4, default=0, max_digits=18, verbose_name='cores per node')),
                ('sockets_per_node', models.DecimalField(decimal_places=4, default=0, max_digits=18, verbose_name='sockets per node')),
                ('named_users', models.DecimalField(decimal_places=4, default=0, max_digits=18, verbose_name='named users')),
                ('gpu_hours_per_year', models.DecimalField(decimal_places=4, default=0, max_digits=18, verbose_name='GPU-hours demanded a year')),
                ('growth_percent', models.DecimalField(decimal_places=4, default=0, max_digits=7, verbose_name='growth a year (%)')),
                ('fte_cost', models.DecimalField(blank=True, decimal_places=4, max_digits=18, null=True, verbose_name='loaded cost of one FTE a year')),
                ('day_rates', models.JSONField(blank=True, default=dict)),
                ('exchange_rates', models.JSONField(blank=True, default=dict)),
                ('updated_at', models.DateTimeField(auto_now=True)),
                ('project', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='cost_model', to='evaluations.project')),
                ('updated_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'verbose_name': 'cost model',
            },
        ),
        migrations.CreateModel(
            name='CostLine',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('category', models.CharField(choices=[('licence', 'licence or subscription'), ('support', 'support'), ('capacity', 'hardware or cloud capacity'), ('implementation', 'implementation'), ('training', 'training'), ('operations', 'operations'), ('exit', 'exit and migration'), ('other', 'other')], max_length=20, verbose_name='category')),
                ('kind', models.CharField(choices=[('per_unit', 'per pricing unit and year'), ('per_year', 'flat, each year'), ('one_off', 'once'), ('fte', 'people (FTE) each year'), ('days', 'person-days, once')], max_length=20, verbose_name='how it runs')),
                ('label', models.CharField(max_length=200, verbose_name='what')),
                ('unit', models.CharField(blank=True, max_length=20, verbose_name='pricing unit')),
                ('team', models.CharField(blank=True, max_length=20, verbose_name='team')),
                ('currency', models.CharField(blank=True, max_length=3, verbose_name='currency')),
                ('low', models.DecimalField(decimal_places=4, max_digits=18, verbose_name='low')),
                ('expected', models.DecimalField(decimal_places=4, max_digits=18, verbose_name='expected')),
                ('high', models.DecimalField(decimal_places=4, max_digits=18, verbose_name='high')),
                ('discount_percent', models.DecimalField(decimal_places=4, default=0, max_digits=7, verbose_name='discount (%)')),
                ('first_year', models.PositiveSmallIntegerField(default=1, verbose_name='from year')),
                ('last_year', models.PositiveSmallIntegerField(blank=True, null=True, verbose_name='to year')),
                ('charge_category', models.CharField(choices=[('Purchase', 'purchase'), ('Usage', 'usage'), ('Adjustment', 'adjustment'), ('Tax', 'tax'), ('Credit', 'credit')], default='Purchase', max_length=20, verbose_name='charge category')),
                ('basis', models.CharField(choices=[('quote', 'vendor quote'), ('list_price', 'published: list price or public terms'), ('estimate', 'our estimate'), ('tbc', 'to be confirmed')], default='tbc', max_length=20, verbose_name='basis')),
                ('reference', models.CharField(blank=True, max_length=300, verbose_name='reference')),
                ('source', models.CharField(blank=True, max_length=500, verbose_name='where it was read')),
                ('valid_until', models.DateField(blank=True, null=True, verbose_name='valid until')),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('candidate', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='cost_lines', to='evaluations.candidate')),
                ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('project', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='evaluations.project')),
            ],
            options={
                'verbose_name': 'cost line',
                'ordering': ['candidate', 'category', 'pk'],
                'indexes': [models.Index(fields=['project', 'candidate'], name='costline_candidate')],
            },
        ),
    ]
