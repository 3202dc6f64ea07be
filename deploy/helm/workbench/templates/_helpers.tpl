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
{{- range $name := list "SECRET_KEY" "SHEET_SIGNING_PASSPHRASE" "WORKBENCH_CREDENTIALS_KEYS" "DATABASE_URL" "REDIS_URL" }}
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
{{- range $name := list "SECRET_KEY" "SHEET_SIGNING_PASSPHRASE" "WORKBENCH_CREDENTIALS_KEYS" "DATABASE_URL" "REDIS_URL" }}
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

{{/* The pod-level settings every workbench pod shares. */}}
{{- define "workbench.podSpecCommon" -}}
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
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
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
