{{/* Chart name, overridable by nameOverride. */}}
{{- define "fencing.name" -}}
{{- default "node-manager-controller" .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Name of every object: the controller is a cluster singleton, so no release-name prefix. */}}
{{- define "fencing.fullname" -}}
{{- default "node-manager-controller" .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "fencing.selectorLabels" -}}
app.kubernetes.io/name: {{ include "fencing.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: controller
{{- end -}}

{{- define "fencing.labels" -}}
{{ include "fencing.selectorLabels" . }}
app.kubernetes.io/part-of: fencing
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end -}}

{{- define "fencing.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "fencing.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* repository[:tag|@digest] of an image block; the tag defaults to the chart's appVersion. */}}
{{- define "fencing.image" -}}
{{- $image := .image -}}
{{- if $image.digest -}}
{{- printf "%s@%s" $image.repository $image.digest -}}
{{- else -}}
{{- printf "%s:%s" $image.repository (default .appVersion $image.tag) -}}
{{- end -}}
{{- end -}}

{{- define "fencing.leaseName" -}}
{{- default (include "fencing.fullname" .) .Values.controller.leaderElection.leaseName -}}
{{- end -}}

{{- define "fencing.agentControllerAddress" -}}
{{- if .Values.agent.controllerAddress -}}
{{- .Values.agent.controllerAddress -}}
{{- else -}}
{{- printf "%s.%s.svc:%d" (include "fencing.fullname" .) .Release.Namespace (int .Values.controller.ports.grpc) -}}
{{- end -}}
{{- end -}}

{{/*
agent.resources as the controller's --agent-resource list: requests.cpu=10m,limits.memory=192Mi (sorted, so the
rendered arguments are stable). Empty when no resources are set.
*/}}
{{- define "fencing.agentResources" -}}
{{- $items := list -}}
{{- $resources := .Values.agent.resources | default dict -}}
{{- range $kind := list "requests" "limits" -}}
{{- $set := get $resources $kind | default dict -}}
{{- range $name := keys $set | sortAlpha -}}
{{- $value := toString (get $set $name) -}}
{{- if contains "," $value -}}
{{- fail (printf "agent.resources.%s.%s: %q must not contain a comma" $kind $name $value) -}}
{{- end -}}
{{- $items = append $items (printf "%s.%s=%s" $kind $name $value) -}}
{{- end -}}
{{- end -}}
{{- join "," $items -}}
{{- end -}}

{{/*
agent.tolerations as the controller's --agent-toleration list: Exists | key[=value][:Effect]. Fails on what that
syntax cannot express instead of silently dropping it.
*/}}
{{- define "fencing.agentTolerations" -}}
{{- $items := list -}}
{{- range $i, $t := .Values.agent.tolerations -}}
{{- $where := printf "agent.tolerations[%d]" $i -}}
{{- if hasKey $t "tolerationSeconds" -}}
{{- fail (printf "%s: tolerationSeconds is not supported: an agent must stay on its node while it is tainted" $where) -}}
{{- end -}}
{{- $op := default "Equal" $t.operator -}}
{{- $key := default "" $t.key -}}
{{- $effect := default "" $t.effect -}}
{{- $spec := "" -}}
{{- if eq $op "Exists" -}}
{{- if $t.value -}}
{{- fail (printf "%s: operator Exists takes no value" $where) -}}
{{- end -}}
{{- if eq $key "" -}}
{{- if $effect -}}
{{- fail (printf "%s: {operator: Exists, effect: %s} without a key cannot be passed to the controller; use {operator: Exists} (tolerate every taint) or name the key" $where $effect) -}}
{{- end -}}
{{- $spec = "Exists" -}}
{{- else -}}
{{- $spec = $key -}}
{{- end -}}
{{- else if eq $op "Equal" -}}
{{- if eq $key "" -}}
{{- fail (printf "%s: operator Equal needs a key" $where) -}}
{{- end -}}
{{- $spec = printf "%s=%s" $key (toString (default "" $t.value)) -}}
{{- else -}}
{{- fail (printf "%s: operator must be Exists or Equal, not %q" $where $op) -}}
{{- end -}}
{{- if and $effect (ne $spec "Exists") -}}
{{- $spec = printf "%s:%s" $spec $effect -}}
{{- end -}}
{{- if contains "," $spec -}}
{{- fail (printf "%s: %q must not contain a comma" $where $spec) -}}
{{- end -}}
{{- $items = append $items $spec -}}
{{- end -}}
{{- join "," $items -}}
{{- end -}}

{{/*
The Secret holding tls.crt, tls.key and ca.crt (cert-manager or your own); required with tls.enabled.
*/}}
{{- define "fencing.tlsSecretName" -}}
{{- required "tls.secretName is required when tls.enabled is true" .Values.tls.secretName -}}
{{- end -}}
