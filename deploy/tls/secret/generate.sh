#!/usr/bin/env bash
# The plain-Secret variant of the mTLS material (no cert-manager): makes a private CA, the
# server certificate of the simulation service and the client certificate of Cluster Autoscaler
# with openssl, and creates the same Secrets cert-manager would:
#   hamisim/hamisim-simulation-tls     tls.crt tls.key ca.crt   (server, mounted by hamisim)
#   kube-system/hamisim-ca-client-tls  tls.crt tls.key ca.crt   (client, mounted by CA)
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
} > secrets.yaml

if [ "${DRY_RUN:-0}" = 1 ]; then
  echo "wrote $(pwd)/secrets.yaml (not applied)" >&2
else
  kubectl apply -f secrets.yaml
fi
