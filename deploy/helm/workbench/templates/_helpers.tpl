{{/*
Names, labels and the pieces every workbench container shares. The web server, the worker,
beat and the migration Job run one image with one environment, as the compose file's
x-workbench-env does; they differ only in their command and what they mount.
*/}}

{{/* The chart's name, or nameOverride. */}}
{{- define "workbench.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The release's base name (at most 63 characters, the limit of a DNS label): fullnameOverride,
or the release name, followed by the chart name unless the release name already holds it.
Components add a suffix, so the base is kept to 52 characters.
*/}}
{{- define "workbench.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 52 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 52 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 52 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* name-version, for the helm.sh/chart label. */}}
{{- define "workbench.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The labels every object carries. */}}
{{- define "workbench.labels" -}}
helm.sh/chart: {{ include "workbench.chart" . }}
{{ include "workbench.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | trunc 63 | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: gpu-selection-workbench
{{- end }}

{{/* The labels that select the release's pods (without a component: all of them). */}}
{{- define "workbench.selectorLabels" -}}
app.kubernetes.io/name: {{ include "workbench.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Labels of one component: (dict "root" $ "component" "web"). */}}
{{- define "workbench.componentLabels" -}}
{{ include "workbench.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* Selector labels of one component: (dict "root" $ "component" "web"). */}}
{{- define "workbench.componentSelectorLabels" -}}
{{ include "workbench.selectorLabels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* The image, tagged with the chart's appVersion unless image.tag says otherwise. */}}
{{- define "workbench.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}

{{/* The Secret that holds SECRET_KEY and the other secret variables. */}}
{{- define "workbench.secretName" -}}
{{- .Values.secrets.existingSecret | default (include "workbench.fullname" .) }}
{{- end }}

{{/* The Secret that holds the signing certificate. */}}
{{- define "workbench.signingSecretName" -}}
{{- .Values.signing.existingSecret | default (printf "%s-signing" (include "workbench.fullname" .)) }}
{{- end }}

{{/* Where the signing certificate is, as SHEET_SIGNING_P12 names it. */}}
{{- define "workbench.signingPath" -}}
{{- printf "%s/%s" (.Values.signing.mountPath | trimSuffix "/") .Values.signing.fileName }}
{{- end }}

{{/* The claim that holds MEDIA_ROOT. */}}
{{- define "workbench.mediaClaimName" -}}
{{- .Values.persistence.existingClaim | default (printf "%s-media" (include "workbench.fullname" .)) }}
{{- end }}

{{/*
The host names of ALLOWED_HOSTS: config.allowedHosts, else the ingress hosts. A wildcard host
(*.example.com) becomes Django's .example.com. Without either, rendering stops: production
refuses to start without ALLOWED_HOSTS.
*/}}
{{- define "workbench.allowedHosts" -}}
{{- $hosts := list }}
{{- if .Values.config.allowedHosts }}
{{- $hosts = .Values.config.allowedHosts }}
{{- else if .Values.ingress.enabled }}
{{- range .Values.ingress.hosts }}
{{- $hosts = append $hosts (regexReplaceAll "^\\*\\." .host ".") }}
{{- end }}
{{- end }}
{{- if not $hosts }}
{{- fail "config.allowedHosts (ALLOWED_HOSTS) is required: the host names the workbench answers to (or enable the ingress with its hosts)" }}
{{- end }}
{{- join "," $hosts }}
{{- end }}

{{/* WORKBENCH_BASE_URL: config.baseUrl, else https:// and the first host. */}}
{{- define "workbench.baseUrl" -}}
{{- if .Values.config.baseUrl }}
{{- .Values.config.baseUrl | trimSuffix "/" }}
{{- else }}
{{- $first := first (splitList "," (include "workbench.allowedHosts" .)) }}
{{- printf "https://%s" (trimPrefix "." $first) }}
{{- end }}
{{- end }}

{{/*
The plain settings, the ConfigMap's data (also hashed into the pods' checksum/config, so that
a change rolls them). The same names and meanings as in the compose file.
*/}}
{{- define "workbench.configData" -}}
DJANGO_ENV: production
ALLOWED_HOSTS: {{ include "workbench.allowedHosts" . | quote }}
CSRF_TRUSTED_ORIGINS: {{ join "," .Values.config.csrfTrustedOrigins | quote }}
USE_X_FORWARDED_PROTO: {{ .Values.config.useXForwardedProto | toString | quote }}
SECURE_SSL_REDIRECT: {{ .Values.config.secureSslRedirect | toString | quote }}
MEDIA_ROOT: {{ .Values.persistence.mountPath | quote }}
SHEET_SIGNING_P12: {{ include "workbench.signingPath" . | quote }}
PROBE_ALLOWED_NETWORKS: {{ join "," .Values.config.probeAllowedNetworks | quote }}
METRICS_ALLOWED_NETWORKS: {{ join "," .Values.config.metricsAllowedNetworks | quote }}
PORT: {{ .Values.web.port | toString | quote }}
EMAIL_HOST: {{ .Values.config.email.host | quote }}
EMAIL_PORT: {{ .Values.config.email.port | toString | quote }}
EMAIL_USE_TLS: {{ .Values.config.email.useTls | toString | quote }}
{{- with .Values.config.email.user }}
EMAIL_HOST_USER: {{ . | quote }}
{{- end }}
DEFAULT_FROM_EMAIL: {{ .Values.config.email.from | quote }}
WORKBENCH_BASE_URL: {{ include "workbench.baseUrl" . | quote }}
LANGUAGE_CODE: {{ .Values.config.languageCode | quote }}
TIME_ZONE: {{ .Values.config.timeZone | quote }}
LOG_LEVEL: {{ .Values.config.logLevel | quote }}
{{- with .Values.config.evidence.s3Bucket }}
EVIDENCE_S3_BUCKET: {{ . | quote }}
{{- end }}
{{- with .Values.config.evidence.s3EndpointUrl }}
EVIDENCE_S3_ENDPOINT_URL: {{ . | quote }}
{{- end }}
{{- with .Values.config.evidence.s3Region }}
EVIDENCE_S3_REGION: {{ . | quote }}
{{- end }}
{{- range $name, $value := .Values.config.extra }}
{{ $name }}: {{ $value | toString | quote }}
{{- end }}
{{- end }}

{{/*
The secret variables, the chart-made Secret's data. CELERY_BROKER_URL is REDIS_URL unless it
is given; the optional ones are written only when set.
*/}}
{{- define "workbench.secretData" -}}
{{- $s := .Values.secrets }}
{{- range $name := list "SECRET_KEY" "SHEET_SIGNING_PASSPHRASE" "WORKBENCH_CREDENTIALS_KEYS" "WORKBENCH_AUDIT_KEYS" "DATABASE_URL" "REDIS_URL" }}
{{ $name }}: {{ required (printf "secrets.%s is required (or name a Secret you manage in secrets.existingSecret)" $name) (get $s $name) | b64enc | quote }}
{{- end }}
CELERY_BROKER_URL: {{ $s.CELERY_BROKER_URL | default $s.REDIS_URL | b64enc | quote }}
{{- range $name := include "workbench.optionalSecretKeys" . | splitList " " }}
{{- with get $s $name }}
{{ $name }}: {{ . | b64enc | quote }}
{{- end }}
{{- end }}
{{- end }}

{{/* Secret variables the app reads when present. */}}
{{- define "workbench.optionalSecretKeys" -}}
EMAIL_HOST_PASSWORD METRICS_TOKEN EVIDENCE_S3_ACCESS_KEY_ID EVIDENCE_S3_SECRET_ACCESS_KEY
{{- end }}

{{/* The chart-made signing Secret's data: the PKCS#12 file, already base64. */}}
{{- define "workbench.signingData" -}}
{{ .Values.signing.fileName }}: {{ required "signing.p12Base64 is required: the organisation's PKCS#12 file, base64 (or name a Secret you manage in signing.existingSecret)" .Values.signing.p12Base64 | nospace | quote }}
{{- end }}

{{/*
The environment of every workbench container: (dict "root" $ "configMap" NAME "secret" NAME).
Plain settings come from the ConfigMap; each secret variable from its key in the Secret
(required ones fail the pod with the key's name when missing; optional ones may be absent).
XDG_RUNTIME_DIR and XDG_CACHE_HOME point at /tmp, the only writable place besides MEDIA_ROOT:
gunicorn's control socket and fontconfig's cache go there.
*/}}
{{- define "workbench.envFrom" -}}
- configMapRef:
    name: {{ .configMap }}
{{- with .root.Values.extraEnvFrom }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "workbench.env" -}}
{{- $secret := .secret }}
{{- range $name := list "SECRET_KEY" "SHEET_SIGNING_PASSPHRASE" "WORKBENCH_CREDENTIALS_KEYS" "WORKBENCH_AUDIT_KEYS" "DATABASE_URL" "REDIS_URL" }}
- name: {{ $name }}
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: {{ $name }}
{{- end }}
{{- range $name := prepend (include "workbench.optionalSecretKeys" .root | splitList " ") "CELERY_BROKER_URL" }}
- name: {{ $name }}
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: {{ $name }}
      optional: true
{{- end }}
- name: XDG_RUNTIME_DIR
  value: /tmp
- name: XDG_CACHE_HOME
  value: /tmp/.cache
{{- with .root.Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
The pod-level settings every workbench pod shares: the root context, or
(dict "root" $ "pod" VALUES) where VALUES' nodeSelector, tolerations and affinity, when not
empty, replace the chart-wide ones (a worker's own scheduling).
*/}}
{{- define "workbench.podSpecCommon" -}}
{{- $pod := dict }}
{{- $root := . }}
{{- if hasKey . "root" }}
{{- $pod = .pod }}
{{- $root = .root }}
{{- end }}
{{- with $root }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.serviceAccount.name }}
serviceAccountName: {{ . }}
{{- end }}
automountServiceAccountToken: {{ .Values.serviceAccount.automountToken }}
{{- with .Values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- with $pod.nodeSelector | default .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $pod.tolerations | default .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $pod.affinity | default .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}
{{- end }}

{{/* The container-level settings every workbench container shares. */}}
{{- define "workbench.containerCommon" -}}
image: {{ include "workbench.image" . | quote }}
imagePullPolicy: {{ .Values.image.pullPolicy }}
securityContext:
  {{- toYaml .Values.containerSecurityContext | nindent 2 }}
{{- end }}

{{/* The writable /tmp every container gets (the root file system is read-only). */}}
{{- define "workbench.tmpVolume" -}}
- name: tmp
  emptyDir:
    {{- with .Values.tmpVolume.sizeLimit }}
    sizeLimit: {{ . }}
    {{- end }}
    {{- with .Values.tmpVolume.medium }}
    medium: {{ . }}
    {{- end }}
{{- end }}

{{/* The signing certificate's volume, from the Secret NAME: (dict "root" $ "secret" NAME). */}}
{{- define "workbench.signingVolume" -}}
- name: signing
  secret:
    secretName: {{ .secret }}
    defaultMode: 0440
    items:
      - key: {{ .root.Values.signing.secretKey | default .root.Values.signing.fileName }}
        path: {{ .root.Values.signing.fileName }}
{{- end }}

{{/* Pod annotations that roll the pods when their configuration changes. */}}
{{- define "workbench.checksums" -}}
checksum/config: {{ include "workbench.configData" . | sha256sum }}
{{- if not .Values.secrets.existingSecret }}
checksum/secret: {{ include "workbench.secretData" . | sha256sum }}
{{- end }}
{{- if not .Values.signing.existingSecret }}
checksum/signing: {{ include "workbench.signingData" . | sha256sum }}
{{- end }}
{{- with .Values.podAnnotations }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
The queues the workbench routes tasks to, as settings.CELERY_TASK_QUEUES declares them: the
default queue (CELERY_TASK_DEFAULT_QUEUE, "default" unless config.extra renames it), "reports"
(reports.tasks.*) and "probes" (poc.tasks.*). tests/deploy holds this list to the settings.
*/}}
{{- define "workbench.taskQueues" -}}
{{- list (get .Values.config.extra "CELERY_TASK_DEFAULT_QUEUE" | default "default" | toString) "reports" "probes" | uniq | toJson }}
{{- end }}

{{/*
The Celery workers, as a JSON list: each entry of `workers` laid over `worker` (the settings
they share; autoscaling key by key, any other key as a whole), with its Deployment's name and
its selector labels added. Legacy (chart 0.1): `worker.queues` given makes one worker,
RELEASE-workbench-worker, with the old selector, and `workers` is ignored.
Rendering stops on a queue no worker consumes, a queue the workbench does not route to, a
queue two workers consume (unless allowSharedQueues), or two workers of one name.
*/}}
{{- define "workbench.workers" -}}
{{- $root := . }}
{{- $fullname := include "workbench.fullname" . }}
{{- $base := omit .Values.worker "queues" }}
{{- $entries := .Values.workers }}
{{- if .Values.worker.queues }}
{{- $entries = list (dict "name" "" "queues" .Values.worker.queues) }}
{{- end }}
{{- $known := include "workbench.taskQueues" . | fromJsonArray }}
{{- $workers := list }}
{{- $names := list }}
{{- $consumed := dict }}
{{- range $index, $entry := $entries }}
{{- $w := deepCopy $base }}
{{- range $key, $value := $entry }}
{{- if and (eq $key "autoscaling") (kindIs "map" $value) }}
{{- $scaling := deepCopy ($base.autoscaling | default dict) }}
{{- range $k, $v := $value }}
{{- $_ := set $scaling $k $v }}
{{- end }}
{{- $_ := set $w "autoscaling" $scaling }}
{{- else }}
{{- $_ := set $w $key $value }}
{{- end }}
{{- end }}
{{- $name := $w.name | toString }}
{{- if has $name $names }}
{{- fail (printf "workers: two workers are named %q" $name) }}
{{- end }}
{{- $names = append $names $name }}
{{- range $queue := $w.queues }}
{{- if not (has $queue $known) }}
{{- fail (printf "workers[%d] (%s) consumes the queue %q, which the workbench routes nothing to (its queues: %s)" $index $name $queue (join ", " $known)) }}
{{- end }}
{{- if and (hasKey $consumed $queue) (not $root.Values.allowSharedQueues) }}
{{- fail (printf "the queue %q is consumed by two workers (%s and %s): give each queue to one worker, or set allowSharedQueues" $queue (get $consumed $queue) $name) }}
{{- end }}
{{- $_ := set $consumed $queue $name }}
{{- end }}
{{- $labels := dict }}
{{- if $name }}
{{- $_ := set $w "deploymentName" (printf "%s-worker-%s" $fullname $name) }}
{{- $_ := set $labels "workbench/worker" $name }}
{{- else }}
{{- $_ := set $w "deploymentName" (printf "%s-worker" $fullname) }}
{{- end }}
{{- $_ := set $w "workerLabels" $labels }}
{{- $workers = append $workers $w }}
{{- end }}
{{- range $queue := $known }}
{{- if not (hasKey $consumed $queue) }}
{{- fail (printf "the queue %q is consumed by no worker: add it to the queues of an entry of workers" $queue) }}
{{- end }}
{{- end }}
{{- toJson $workers }}
{{- end }}

{{/* The selector labels of one worker's pods: (dict "root" $ "worker" WORKER). */}}
{{- define "workbench.workerSelectorLabels" -}}
{{ include "workbench.componentSelectorLabels" (dict "root" .root "component" "worker") }}
{{- range $key, $value := .worker.workerLabels }}
{{ $key }}: {{ $value | quote }}
{{- end }}
{{- end }}

{{/* The labels of one worker's objects: (dict "root" $ "worker" WORKER). */}}
{{- define "workbench.workerLabels" -}}
{{ include "workbench.componentLabels" (dict "root" .root "component" "worker") }}
{{- range $key, $value := .worker.workerLabels }}
{{ $key }}: {{ $value | quote }}
{{- end }}
{{- end }}

{{/* The port of a URL, or the default: (dict "url" URL "default" PORT). */}}
{{- define "workbench.urlPort" -}}
{{- $host := (urlParse .url).host }}
{{- if regexMatch ":[0-9]+$" $host }}
{{- regexFind "[0-9]+$" $host }}
{{- else }}
{{- .default }}
{{- end }}
{{- end }}

{{/*
One egress rule of a NetworkPolicy, as YAML: (dict "to" ENDPOINT "ports" PORTS "protocols" LIST).
ENDPOINT holds cidrs, namespaceSelector and podSelector; with none of them the ports are open
to any address, else only to those CIDRs and to the pods the two selectors match together.
*/}}
{{- define "workbench.egressRule" -}}
{{- $ports := list }}
{{- range $port := .ports }}
{{- range $protocol := $.protocols }}
{{- $ports = append $ports (dict "port" (int $port) "protocol" $protocol) }}
{{- end }}
{{- end }}
{{- $rule := dict "ports" $ports }}
{{- $peers := list }}
{{- range .to.cidrs }}
{{- $peers = append $peers (dict "ipBlock" (dict "cidr" .)) }}
{{- end }}
{{- if or .to.namespaceSelector .to.podSelector }}
{{- $peer := dict }}
{{- with .to.namespaceSelector }}
{{- $_ := set $peer "namespaceSelector" . }}
{{- end }}
{{- with .to.podSelector }}
{{- $_ := set $peer "podSelector" . }}
{{- end }}
{{- $peers = append $peers $peer }}
{{- end }}
{{- if $peers }}
{{- $_ := set $rule "to" $peers }}
{{- end }}
{{- toYaml $rule }}
{{- end }}

{{/* The ports of PostgreSQL: networkPolicy.postgresql.ports, else DATABASE_URL's, else 5432. */}}
{{- define "workbench.postgresqlPorts" -}}
{{- $ports := .Values.networkPolicy.postgresql.ports }}
{{- if not $ports }}
{{- $ports = list 5432 }}
{{- if and (not .Values.secrets.existingSecret) .Values.secrets.DATABASE_URL }}
{{- $ports = list (include "workbench.urlPort" (dict "url" .Values.secrets.DATABASE_URL "default" 5432) | atoi) }}
{{- end }}
{{- end }}
{{- toJson $ports }}
{{- end }}

{{/* The ports of Redis: networkPolicy.redis.ports, else REDIS_URL's and CELERY_BROKER_URL's, else 6379. */}}
{{- define "workbench.redisPorts" -}}
{{- $ports := .Values.networkPolicy.redis.ports }}
{{- if not $ports }}
{{- $ports = list 6379 }}
{{- if not .Values.secrets.existingSecret }}
{{- $found := list }}
{{- range $url := list .Values.secrets.REDIS_URL .Values.secrets.CELERY_BROKER_URL }}
{{- if $url }}
{{- $found = append $found (include "workbench.urlPort" (dict "url" $url "default" 6379) | atoi) }}
{{- end }}
{{- end }}
{{- if $found }}
{{- $ports = $found | uniq }}
{{- end }}
{{- end }}
{{- end }}
{{- toJson $ports }}
{{- end }}

{{/* The ports of the object store: networkPolicy.objectStorage.ports, else the endpoint URL's, else 443. */}}
{{- define "workbench.objectStoragePorts" -}}
{{- $ports := .Values.networkPolicy.objectStorage.ports }}
{{- if not $ports }}
{{- $ports = list 443 }}
{{- with .Values.config.evidence.s3EndpointUrl }}
{{- $default := ternary 80 443 (hasPrefix "http://" .) }}
{{- $ports = list (include "workbench.urlPort" (dict "url" . "default" $default) | atoi) }}
{{- end }}
{{- end }}
{{- toJson $ports }}
{{- end }}

{{/*
The networks cluster probes reach, as CIDRs: networkPolicy.probes.egressCIDRs, else the
addresses and CIDRs of config.probeAllowedNetworks (PROBE_ALLOWED_NETWORKS; a bare address
becomes a /32 or /128, a host name is left out: a NetworkPolicy holds no names).
*/}}
{{- define "workbench.probeCidrs" -}}
{{- $cidrs := list }}
{{- range $entry := .Values.networkPolicy.probes.egressCIDRs | default .Values.config.probeAllowedNetworks }}
{{- $entry = trim $entry }}
{{- if regexMatch "^[0-9]{1,3}(\\.[0-9]{1,3}){3}(/[0-9]{1,2})?$" $entry }}
{{- $cidrs = append $cidrs (ternary $entry (printf "%s/32" $entry) (contains "/" $entry)) }}
{{- else if regexMatch "^[0-9A-Fa-f:]*:[0-9A-Fa-f:.]*(/[0-9]{1,3})?$" $entry }}
{{- $cidrs = append $cidrs (ternary $entry (printf "%s/128" $entry) (contains "/" $entry)) }}
{{- end }}
{{- end }}
{{- toJson ($cidrs | uniq) }}
{{- end }}

{{/* The host names of PROBE_ALLOWED_NETWORKS a NetworkPolicy cannot hold (for NOTES.txt). */}}
{{- define "workbench.probeNames" -}}
{{- $names := list }}
{{- if not .Values.networkPolicy.probes.egressCIDRs }}
{{- range $entry := .Values.config.probeAllowedNetworks }}
{{- if not (regexMatch "^([0-9]{1,3}(\\.[0-9]{1,3}){3}|[0-9A-Fa-f:]*:[0-9A-Fa-f:.]*)(/[0-9]{1,3})?$" (trim $entry)) }}
{{- $names = append $names $entry }}
{{- end }}
{{- end }}
{{- end }}
{{- join ", " $names }}
{{- end }}

{{/*
The egress rule to the clusters' networks, as YAML (empty without a CIDR): the probe ports to
each CIDR, link-local addresses (cloud metadata) excepted from an all-addresses block as the
probes' network guard refuses them whatever PROBE_ALLOWED_NETWORKS says.
*/}}
{{- define "workbench.probesEgressRule" -}}
{{- $cidrs := include "workbench.probeCidrs" . | fromJsonArray }}
{{- if $cidrs }}
{{- $peers := list }}
{{- range $cidr := $cidrs }}
{{- $block := dict "cidr" $cidr }}
{{- if eq $cidr "0.0.0.0/0" }}
{{- $_ := set $block "except" (list "169.254.0.0/16") }}
{{- else if eq $cidr "::/0" }}
{{- $_ := set $block "except" (list "fe80::/10") }}
{{- end }}
{{- $peers = append $peers (dict "ipBlock" $block) }}
{{- end }}
{{- $ports := list }}
{{- range $port := .Values.networkPolicy.probes.ports }}
{{- $ports = append $ports (dict "port" (int $port) "protocol" "TCP") }}
{{- end }}
{{- toYaml (dict "to" $peers "ports" $ports) }}
{{- end }}
{{- end }}

{{/*
The egress rules every workbench pod gets, as a YAML list: DNS, PostgreSQL, Redis and
networkPolicy.extraEgress.
*/}}
{{- define "workbench.commonEgress" -}}
{{- $np := .Values.networkPolicy }}
{{- $rules := list }}
{{- $rules = append $rules (include "workbench.egressRule" (dict "to" $np.dns "ports" $np.dns.ports "protocols" (list "UDP" "TCP")) | fromYaml) }}
{{- $rules = append $rules (include "workbench.egressRule" (dict "to" $np.postgresql "ports" (include "workbench.postgresqlPorts" . | fromJsonArray) "protocols" (list "TCP")) | fromYaml) }}
{{- $rules = append $rules (include "workbench.egressRule" (dict "to" $np.redis "ports" (include "workbench.redisPorts" . | fromJsonArray) "protocols" (list "TCP")) | fromYaml) }}
{{- range $np.extraEgress }}
{{- $rules = append $rules . }}
{{- end }}
{{- toYaml $rules }}
{{- end }}
