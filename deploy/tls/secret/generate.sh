#!/usr/bin/env bash
# The plain-Secret variant of the TLS material (no cert-manager): makes a private CA, the
# server certificate of the simulation service, the client certificate of Cluster Autoscaler
# and the live pod's server certificate with openssl, and creates the same Secrets
# cert-manager would (deploy/tls/cert-manager/):
#   hamisim/hamisim-simulation-tls     tls.crt tls.key ca.crt   (server, mounted by hamisim)
#   kube-system/hamisim-ca-client-tls  tls.crt tls.key ca.crt   (client, mounted by CA)
#   hamisim/hamisim-scheduler-tls      tls.crt tls.key ca.crt   (live pod: webhook Service
#                                                               names and 127.0.0.1)
# Without cert-manager nothing injects the webhook's caBundle: the script prints the patch.
#
#   deploy/tls/secret/generate.sh [OUT_DIR]          # writes PEMs, then kubectl apply
#   DRY_RUN=1 deploy/tls/secret/generate.sh OUT_DIR  # writes PEMs and the Secret YAML only
#
# The CA key stays in OUT_DIR (default ./hamisim-pki): keep it safe, or delete it and rerun the
# script to rotate everything. Certificates are valid for 365 days.
set -euo pipefail
out="${1:-./hamisim-pki}"
days="${DAYS:-365}"
mkdir -p "$out"
umask 077
cd "$out"

if [ ! -f ca.key ]; then
  openssl ecparam -name prime256v1 -genkey -noout -out ca.key
  openssl req -x509 -new -key ca.key -sha256 -days 3650 -subj "/CN=hamisim-root-ca" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -out ca.crt
fi

issue() { # name cn extensions
  openssl ecparam -name prime256v1 -genkey -noout -out "$1.key"
  openssl req -new -key "$1.key" -subj "/CN=$2" -out "$1.csr"
  printf '%s\n' "$3" > "$1.ext"
  openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -sha256 \
    -days "$days" -extfile "$1.ext" -out "$1.crt"
  rm -f "$1.csr" "$1.ext"
}

issue server hamisim-simulation.hamisim.svc "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=DNS:hamisim-simulation,DNS:hamisim-simulation.hamisim,DNS:hamisim-simulation.hamisim.svc,DNS:hamisim-simulation.hamisim.svc.cluster.local"
issue live-server hamisim-scheduler.hamisim.svc "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=DNS:hamisim-scheduler,DNS:hamisim-scheduler.hamisim,DNS:hamisim-scheduler.hamisim.svc,DNS:hamisim-scheduler.hamisim.svc.cluster.local,IP:127.0.0.1"
# The CN is the identity `hamisim serve --allow-simulation-clients` admits.
issue ca-client cluster-autoscaler "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth"

secret() { # namespace name stem
  kubectl create secret generic "$2" --namespace "$1" --type kubernetes.io/tls \
    --from-file=tls.crt="$3.crt" --from-file=tls.key="$3.key" --from-file=ca.crt=ca.crt \
    --dry-run=client -o yaml
}
{
  secret hamisim hamisim-simulation-tls server
  echo "---"
  secret kube-system hamisim-ca-client-tls ca-client
  echo "---"
  secret hamisim hamisim-scheduler-tls live-server
} > secrets.yaml

if [ "${DRY_RUN:-0}" = 1 ]; then
  echo "wrote $(pwd)/secrets.yaml (not applied)" >&2
else
  kubectl apply -f secrets.yaml
fi
echo "after applying deploy/overlays/live (or all), give the webhook this CA:" >&2
echo "  kubectl patch mutatingwebhookconfiguration hamisim-webhook --type json -p" \
  "'[{\"op\":\"add\",\"path\":\"/webhooks/0/clientConfig/caBundle\",\"value\":\"$(base64 -w0 ca.crt)\"}]'" >&2
