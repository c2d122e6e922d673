{{/* The prefix of the names of the objects of the operator and the receiver
(fullnameOverride, default hookrun). The roles for people, the admission
policies and the CRDs keep their names: they are hookrun's API. */}}
{{- define "hookrun.fullname" -}}
{{- .Values.fullnameOverride | default "hookrun" -}}
{{- end }}

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
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}
{{- end }}

{{/* The pod template's labels: podLabels, then the selector labels (which
podLabels cannot override). Args: root, component, values (the component's). */}}
{{- define "hookrun.podLabels" -}}
{{- $selector := include "hookrun.selector" (dict "root" .root "component" .component) | fromYaml }}
{{- toYaml (merge $selector (.values.podLabels | default dict)) }}
{{- end }}

{{/* Where a component's pods run, from its values (args: root, component,
values). A topology spread constraint without a labelSelector counts the
component's pods. */}}
{{- define "hookrun.podScheduling" -}}
{{- with .values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- with .values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.topologySpreadConstraints }}
{{- $selector := include "hookrun.selector" (dict "root" $.root "component" $.component) | fromYaml }}
topologySpreadConstraints:
{{- range . }}
{{- $constraint := deepCopy . }}
{{- if not (hasKey $constraint "labelSelector") }}
{{- $_ := set $constraint "labelSelector" (dict "matchLabels" $selector) }}
{{- end }}
- {{ toYaml $constraint | nindent 2 | trim }}
{{- end }}
{{- end }}
{{- end }}

{{- define "hookrun.publicBaseURL" -}}
{{- required "publicBaseURL is required: the externally reachable base of the receiver, for example https://hooks.example.com" .Values.publicBaseURL -}}
{{- end }}

{{/* How WebhookEndpoint.spec.owner gets its value (admission.ownerDefaulting):
Policy (a MutatingAdmissionPolicy fills it from the creator) or Required (the
creator writes it). Auto is Policy where the API server serves
admissionregistration.k8s.io/v1 MutatingAdmissionPolicy (helm install and
upgrade ask it; helm template knows it only from
--api-versions admissionregistration.k8s.io/v1/MutatingAdmissionPolicy),
else Required. */}}
{{- define "hookrun.ownerDefaulting" -}}
{{- $mode := .Values.admission.ownerDefaulting | default "Auto" -}}
{{- if ne $mode "Auto" -}}
{{- $mode -}}
{{- else if .Capabilities.APIVersions.Has "admissionregistration.k8s.io/v1/MutatingAdmissionPolicy" -}}
Policy
{{- else -}}
Required
{{- end -}}
{{- end }}

{{/* The receiver pod's terminationGracePeriodSeconds: receiver.shutdownDelay
(whole minutes and seconds, as the schema allows), then up to 25 s to drain
the calls in flight, 10 s to write the last rejection report, 5 s to export
the last spans, and 5 s to spare (receiver.Options.StopTimeout and
tracing.FlushTimeout; test/chart checks the sum). */}}
{{- define "hookrun.receiverTerminationGracePeriodSeconds" -}}
{{- $delay := toString .Values.receiver.shutdownDelay }}
{{- $minutes := regexFind "^[0-9]+m" $delay | trimSuffix "m" | default "0" | atoi }}
{{- $seconds := regexFind "[0-9]+s$" $delay | trimSuffix "s" | default "0" | atoi }}
{{- add (mul $minutes 60) $seconds 45 }}
{{- end }}
