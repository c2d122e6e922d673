{{/* Labels of every object. */}}
{{- define "hookrun.labels" -}}
app.kubernetes.io/name: hookrun
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end }}

{{/* Selector labels of a component (operator, receiver). */}}
{{- define "hookrun.selector" -}}
app.kubernetes.io/name: hookrun
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "hookrun.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{/* The pod and container security settings both components use. */}}
{{- define "hookrun.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
seccompProfile:
  type: RuntimeDefault
{{- end }}
{{- define "hookrun.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: ["ALL"]
{{- end }}

{{- define "hookrun.publicBaseURL" -}}
{{- required "publicBaseURL is required: the externally reachable base of the receiver, for example https://hooks.example.com" .Values.publicBaseURL -}}
{{- end }}
