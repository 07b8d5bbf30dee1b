{{/* The chart's name. */}}
{{- define "openrecall.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release's object name. */}}
{{- define "openrecall.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Labels every object carries. */}}
{{- define "openrecall.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "openrecall.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* Labels that select the serve pods. */}}
{{- define "openrecall.selectorLabels" -}}
app.kubernetes.io/name: {{ include "openrecall.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
The mode checks: every template includes this, so a bad combination fails
whatever is rendered, with a message that says what to set.
*/}}
{{- define "openrecall.validate" -}}
{{- if not (has .Values.database (list "sqlite" "postgresql")) }}
{{- fail (printf "database is %q: want sqlite (one replica, a volume) or postgresql (N replicas, a DSN Secret)" .Values.database) }}
{{- end }}
{{- if and (eq .Values.database "sqlite") (gt (int .Values.replicaCount) 1) }}
{{- fail (printf "replicaCount is %d but database is sqlite: SQLite allows one serve process; set replicaCount=1, or database=postgresql with postgresql.existingSecret for N replicas" (int .Values.replicaCount)) }}
{{- end }}
{{- if and (eq .Values.database "postgresql") (not .Values.postgresql.existingSecret) (not .Values.postgresql.dsn) }}
{{- fail "database is postgresql but no DSN is given: set postgresql.existingSecret (a Secret with key postgresql.dsnKey holding postgres://…) or postgresql.dsn" }}
{{- end }}
{{- with .Values.auditKey.value }}
{{- if not (regexMatch "^[0-9a-fA-F]{64}$" .) }}
{{- fail "auditKey.value must be 64 hex digits (openssl rand -hex 32)" }}
{{- end }}
{{- end }}
{{- range $k, $v := (dict "tokens.ingest" .Values.tokens.ingest "tokens.read" .Values.tokens.read) }}
{{- if and $v (lt (len $v) 16) }}
{{- fail (printf "%s is %d bytes: a token needs 16 at least (openssl rand -hex 16)" $k (len $v)) }}
{{- end }}
{{- end }}
{{- range $i, $a := .Values.tokens.analysts }}
{{- if or (not (get $a "name")) (not (get $a "key")) (not (get $a "scopes")) }}
{{- fail (printf "tokens.analysts[%d] needs name, key and scopes (read, retain, ingest)" $i) }}
{{- end }}
{{- if and (not (get $a "secretName")) (not $.Values.tokens.existingSecret) }}
{{- fail (printf "tokens.analysts[%d] (%s): give its secretName, or tokens.existingSecret holding key %s" $i $a.name $a.key) }}
{{- end }}
{{- end }}
{{- end }}

{{/* The Secret the chart makes for the values given inline. */}}
{{- define "openrecall.secretName" -}}
{{- include "openrecall.fullname" . }}
{{- end }}

{{/* The Secret holding the tokens. */}}
{{- define "openrecall.tokensSecret" -}}
{{- .Values.tokens.existingSecret | default (include "openrecall.secretName" .) }}
{{- end }}

{{/* The container image. */}}
{{- define "openrecall.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}

{{/*
config.yaml: the config value, with what the chart decides laid over it:
the analysts' tokens (read from their environment variables) and, in
sqlite mode, a fixed server.instance (one process at a time, so a restart
takes its former claims back at once instead of after the lease).
*/}}
{{- define "openrecall.config" -}}
{{- $cfg := deepCopy .Values.config }}
{{- $server := get $cfg "server" | default dict }}
{{- $tokens := get $server "tokens" | default list }}
{{- range $i, $a := .Values.tokens.analysts }}
{{- $tokens = append $tokens (dict "name" $a.name "token_env" (printf "OPENRECALL_ANALYST_TOKEN_%d" $i) "scopes" $a.scopes) }}
{{- end }}
{{- if $tokens }}
{{- $_ := set $server "tokens" $tokens }}
{{- end }}
{{- if and (eq .Values.database "sqlite") (not (hasKey $server "instance")) }}
{{- $_ := set $server "instance" (include "openrecall.fullname" .) }}
{{- end }}
{{- if $server }}
{{- $_ := set $cfg "server" $server }}
{{- end }}
{{- toYaml $cfg }}
{{- end }}
