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

{{/* True (non-empty) unless tls.mode is disabled: AgentControl is served over TLS from a mounted Secret. */}}
{{- define "fencing.tlsEnabled" -}}
{{- if ne .Values.tls.mode "disabled" -}}true{{- end -}}
{{- end -}}

{{/*
The Secret holding tls.crt, tls.key and ca.crt: your own (mode secret, required), else the one the chart or
cert-manager fills (default <fullname>-tls).
*/}}
{{- define "fencing.tlsSecretName" -}}
{{- if eq .Values.tls.mode "secret" -}}
{{- required "tls.secretName is required when tls.mode is secret: name a Secret in the release namespace with tls.crt, tls.key and ca.crt" .Values.tls.secretName -}}
{{- else -}}
{{- default (printf "%s-tls" (include "fencing.fullname" .)) .Values.tls.secretName -}}
{{- end -}}
{{- end -}}

{{/* Secret key of the certificate chain / private key: configurable only for a Secret you bring. */}}
{{- define "fencing.tlsCertKey" -}}
{{- if eq .Values.tls.mode "secret" -}}{{ .Values.tls.certKey }}{{- else -}}tls.crt{{- end -}}
{{- end -}}
{{- define "fencing.tlsKeyKey" -}}
{{- if eq .Values.tls.mode "secret" -}}{{ .Values.tls.keyKey }}{{- else -}}tls.key{{- end -}}
{{- end -}}

{{/*
DNS names of the serving certificate, comma-separated: the Service in every form a client may dial, plus the host of
agent.controllerAddress (what agents and follower replicas verify, ControllerConfig.serverName()) when it is another
name. An IP address there cannot be covered by a DNS SAN, so the chart refuses it.
*/}}
{{- define "fencing.tlsDnsNames" -}}
{{- $fullname := include "fencing.fullname" . -}}
{{- $ns := .Release.Namespace -}}
{{- $names := list $fullname (printf "%s.%s" $fullname $ns) (printf "%s.%s.svc" $fullname $ns) (printf "%s.%s.svc.cluster.local" $fullname $ns) -}}
{{- $address := include "fencing.agentControllerAddress" . -}}
{{- $host := regexReplaceAll ":[0-9]+$" $address "" -}}
{{- if regexMatch "^[0-9.]+$|^\\[" $host -}}
{{- fail (printf "agent.controllerAddress %q: with TLS agents verify the controller by DNS name; use a host name (the chart puts it in the certificate) or tls.mode=secret with your own certificate" $address) -}}
{{- end -}}
{{- if not (has $host $names) -}}
{{- $names = append $names $host -}}
{{- end -}}
{{- join "," $names -}}
{{- end -}}

{{/*
One byte (0-255) as base64 text, so binary DER can be assembled with b64dec: templates have no byte literals.
*/}}
{{- define "fencing.derByte" -}}
{{- $alphabet := splitList "" "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/" -}}
{{- $b := int . -}}
{{- printf "%s%s==" (index $alphabet (div $b 4)) (index $alphabet (mul (mod $b 4) 16)) -}}
{{- end -}}

{{/*
A PKCS#1 "RSA PRIVATE KEY" PEM (what Sprig's genSignedCert writes) re-wrapped as a PKCS#8 "PRIVATE KEY" PEM, the only
form the controller (grpc CertificateUtils) reads:
SEQUENCE { INTEGER 0, SEQUENCE { OID 1.2.840.113549.1.1.1, NULL }, OCTET STRING { <PKCS#1 DER> } }.
*/}}
{{- define "fencing.pkcs8" -}}
{{- $body := regexReplaceAll "-----[A-Z ]+-----|\\s" . "" -}}
{{- $der := b64dec $body -}}
{{- $n := len $der -}}
{{- if or (lt $n 256) (gt $n 65000) -}}
{{- fail (printf "unexpected RSA private key size %d bytes" $n) -}}
{{- end -}}
{{- $total := add $n 22 -}}
{{- $head := b64dec "MII=" -}}
{{- $algorithm := b64dec "AgEAMA0GCSqGSIb3DQEBAQUABII=" -}}
{{- $pkcs8 := printf "%s%s%s%s%s%s%s" $head (b64dec (include "fencing.derByte" (div $total 256))) (b64dec (include "fencing.derByte" (mod $total 256))) $algorithm (b64dec (include "fencing.derByte" (div $n 256))) (b64dec (include "fencing.derByte" (mod $n 256))) $der -}}
{{- printf "-----BEGIN PRIVATE KEY-----\n%s\n-----END PRIVATE KEY-----\n" (regexFindAll ".{1,64}" (b64enc $pkcs8) -1 | join "\n") -}}
{{- end -}}
