"""GPU evidence becomes its own app. Its models were poc's (poc.0003, 0004, 0005): here they are
taken into this app's state over the same tables, with nothing done to the database; poc.0010
drops them from poc's state, and 0002 renames the tables."""

import django.db.models.deletion
import poc.probes.models.probes
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('evaluations', '0013_project_phase_moves'),
        ('poc', '0009_api_token_moved'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='ProbeNode',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('host', models.CharField(blank=True, max_length=255, verbose_name='host')),
                        ('position', models.PositiveIntegerField(default=0)),
                        ('facts', models.JSONField()),
                        ('health', models.JSONField()),
                        ('verdict', models.CharField(blank=True, choices=[('healthy', 'Healthy'), ('degraded', 'Degraded'), ('failed', 'Failed')], max_length=20, verbose_name='verdict')),
                        ('gpu_count', models.PositiveIntegerField(default=0)),
                        ('error', models.TextField(blank=True, verbose_name='error')),
                    ],
                    options={
                        'db_table': 'poc_probenode',
                        'ordering': ['position', 'pk'],
                    },
                ),
                migrations.CreateModel(
                    name='Cluster',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('name', models.CharField(max_length=100, verbose_name='name')),
                        ('kind', models.CharField(choices=[('ssh', 'SSH nodes'), ('kubernetes', 'Kubernetes'), ('slurm_rest', 'Slurm (slurmrestd)'), ('slurm_ssh', 'Slurm (commands over SSH)'), ('agent', 'Push agent only')], max_length=20, verbose_name='kind')),
                        ('hosts', models.TextField(blank=True, verbose_name='nodes')),
                        ('ssh_user', models.CharField(blank=True, max_length=64, verbose_name='SSH user')),
                        ('ssh_port', models.PositiveIntegerField(default=22, verbose_name='SSH port')),
                        ('api_url', models.CharField(blank=True, max_length=500, verbose_name='API URL')),
                        ('slurm_user', models.CharField(blank=True, max_length=64, verbose_name='Slurm user')),
                        ('expected_gpus_per_node', models.PositiveIntegerField(blank=True, null=True, verbose_name='GPUs each node should have')),
                        ('controlled_failures', models.BooleanField(default=False, verbose_name='run controlled failures')),
                        ('failure_namespace', models.CharField(blank=True, max_length=63, verbose_name='namespace for controlled failures')),
                        ('schedule_minutes', models.PositiveIntegerField(blank=True, null=True, verbose_name='probe every (minutes)')),
                        ('secrets', models.TextField(blank=True)),
                        ('secret_summary', models.JSONField(blank=True, default=dict)),
                        ('host_keys', models.JSONField(blank=True, default=dict)),
                        ('seen_host_keys', models.JSONField(blank=True, default=dict)),
                        ('last_scheduled_at', models.DateTimeField(blank=True, null=True)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                        ('candidate', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='clusters', to='evaluations.candidate')),
                        ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to=settings.AUTH_USER_MODEL)),
                        ('project', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='clusters', to='evaluations.project')),
                    ],
                    options={
                        'verbose_name': 'cluster',
                        'db_table': 'poc_cluster',
                        'ordering': ['name', 'pk'],
                    },
                ),
                migrations.CreateModel(
                    name='ProbeBinding',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('check_key', models.CharField(blank=True, max_length=60, verbose_name='check')),
                        ('params', models.JSONField(blank=True, default=dict)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                        ('action', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='probe_binding', to='evaluations.acceptanceaction')),
                        ('project', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='evaluations.project')),
                        ('updated_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'verbose_name': 'probe binding',
                        'db_table': 'poc_probebinding',
                    },
                ),
                migrations.CreateModel(
                    name='ProbeRun',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('source', models.CharField(choices=[('agent', 'Push agent'), ('upload', 'Uploaded in the browser'), ('ssh', 'SSH probe'), ('kubernetes', 'Kubernetes probe'), ('slurm', 'Slurm probe')], max_length=20, verbose_name='source')),
                        ('status', models.CharField(choices=[('queued', 'Queued'), ('running', 'Running'), ('done', 'Done'), ('partial', 'Done, some nodes failed'), ('failed', 'Failed'), ('timed_out', 'Timed out'), ('cancelled', 'Cancelled')], max_length=20, verbose_name='status')),
                        ('verdict', models.CharField(blank=True, choices=[('healthy', 'Healthy'), ('degraded', 'Degraded'), ('failed', 'Failed')], max_length=20, verbose_name='verdict')),
                        ('node_count', models.PositiveIntegerField(default=0)),
                        ('gpu_count', models.PositiveIntegerField(default=0)),
                        ('parser_version', models.CharField(max_length=20)),
                        ('facts_format', models.CharField(max_length=60)),
                        ('error', models.TextField(blank=True, verbose_name='error')),
                        ('queued_at', models.DateTimeField(blank=True, null=True)),
                        ('unsent', models.BooleanField(default=False)),
                        ('work_started_at', models.DateTimeField(blank=True, null=True)),
                        ('attempts', models.PositiveIntegerField(default=0)),
                        ('progress_done', models.PositiveIntegerField(default=0)),
                        ('progress_total', models.PositiveIntegerField(default=0)),
                        ('cancel_requested', models.BooleanField(default=False)),
                        ('with_failures', models.BooleanField(default=False)),
                        ('cluster_facts', models.JSONField(blank=True, default=dict)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('finished_at', models.DateTimeField(blank=True, null=True)),
                        ('candidate', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='probe_runs', to='evaluations.candidate')),
                        ('cluster', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='runs', to='probes.cluster')),
                        ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to=settings.AUTH_USER_MODEL)),
                        ('project', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='probe_runs', to='evaluations.project')),
                        ('run', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='probe_runs', to='poc.run')),
                        ('token', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to='evaluations.apitoken')),
                    ],
                    options={
                        'verbose_name': 'probe run',
                        'db_table': 'poc_proberun',
                        'ordering': ['-created_at', '-pk'],
                    },
                ),
                migrations.CreateModel(
                    name='ProbeOutput',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('name', models.CharField(max_length=500, verbose_name='name')),
                        ('exit_code', models.IntegerField(blank=True, null=True)),
                        ('error', models.TextField(blank=True)),
                        ('file', models.FileField(blank=True, max_length=300, upload_to=poc.probes.models.probes.probe_output_upload_to)),
                        ('sha256', models.CharField(blank=True, max_length=64)),
                        ('size', models.PositiveBigIntegerField(default=0)),
                        ('position', models.PositiveIntegerField(default=0)),
                        ('node', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='outputs', to='probes.probenode')),
                        ('run', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='outputs', to='probes.proberun')),
                    ],
                    options={
                        'db_table': 'poc_probeoutput',
                        'ordering': ['position', 'pk'],
                    },
                ),
                migrations.AddField(
                    model_name='probenode',
                    name='run',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='nodes', to='probes.proberun'),
                ),
                migrations.AddConstraint(
                    model_name='cluster',
                    constraint=models.UniqueConstraint(fields=('project', 'name'), name='cluster_name_unique'),
                ),
                migrations.AddIndex(
                    model_name='proberun',
                    index=models.Index(fields=['candidate', '-created_at'], name='poc_proberu_candida_243b04_idx'),
                ),
                migrations.AddIndex(
                    model_name='proberun',
                    index=models.Index(fields=['cluster', '-created_at'], name='poc_proberu_cluster_839935_idx'),
                ),
                migrations.AddIndex(
                    model_name='proberun',
                    index=models.Index(fields=['status'], name='poc_proberu_status_05f5c7_idx'),
                ),
            ],
            database_operations=[],
        ),
    ]
