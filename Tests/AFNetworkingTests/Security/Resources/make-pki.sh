#!/bin/sh
# Regenerates the test PKI used by the SecurityPolicy tests.
#
# Output (next to this script):
#   *.cer            DER certificates, loaded by the tests
#   keys/*.key.pem   private keys, kept so live TLS tests can serve the same chain
#
# Every certificate is valid for ~100 years, except expired-leaf.cer, whose
# validity window (2000-2001) lies entirely in the past.
# Requires only the `openssl` command-line tool (tested with OpenSSL 3.0).
set -eu

OUT=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
DAYS=36500
mkdir -p "$OUT/keys"

# EC keys are quick to generate and make small certificates.
newkey() { openssl ecparam -name prime256v1 -genkey -noout -out "$OUT/keys/$1.key.pem"; }


self_signed() { # name subject extensions...
    name=$1; subj=$2; shift 2
    newkey "$name"
    printf '%s\n' "[req]" "distinguished_name=dn" "[dn]" "[v3]" "$@" > "$WORK/$name.cnf"
    openssl req -new -x509 -key "$OUT/keys/$name.key.pem" -subj "$subj" -days $DAYS \
        -sha256 -config "$WORK/$name.cnf" -extensions v3 -outform DER -out "$OUT/$name.cer"
}

issue() { # name issuer subject extensions...
    name=$1; issuer=$2; subj=$3; shift 3
    newkey "$name"
    printf '%s\n' "[v3]" "$@" > "$WORK/$name.ext"
    openssl req -new -key "$OUT/keys/$name.key.pem" -subj "$subj" -out "$WORK/$name.csr"
    openssl x509 -req -in "$WORK/$name.csr" -CA "$OUT/$issuer.cer" -CAform DER \
        -CAkey "$OUT/keys/$issuer.key.pem" -set_serial "0x$(openssl rand -hex 8)" \
        -days $DAYS -sha256 -extfile "$WORK/$name.ext" -extensions v3 \
        -outform DER -out "$OUT/$name.cer"
}

CA_EXT="basicConstraints=critical,CA:TRUE
keyUsage=critical,keyCertSign,cRLSign
subjectKeyIdentifier=hash"
LEAF_BASE="basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth"

# Main chain: root -> intermediate -> leaf (localhost, 127.0.0.1, ::1).
self_signed root-ca "/O=AFNetworking Tests/CN=AFNetworking Test Root CA" "$CA_EXT"
issue intermediate-ca root-ca "/O=AFNetworking Tests/CN=AFNetworking Test Intermediate CA" \
    "basicConstraints=critical,CA:TRUE,pathlen:0" "keyUsage=critical,keyCertSign,cRLSign"
issue leaf-localhost intermediate-ca "/CN=localhost" "$LEAF_BASE" \
    "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1"
issue leaf-wildcard intermediate-ca "/CN=*.example.test" "$LEAF_BASE" \
    "subjectAltName=DNS:*.example.test"
issue leaf-wronghost intermediate-ca "/CN=wrong.test" "$LEAF_BASE" \
    "subjectAltName=DNS:wrong.test"

# A second, unrelated PKI (stands in for "some other site").
self_signed unrelated-root-ca "/O=Unrelated Tests/CN=Unrelated Test Root CA" "$CA_EXT"
issue unrelated-leaf unrelated-root-ca "/CN=unrelated.test" "$LEAF_BASE" \
    "subjectAltName=DNS:unrelated.test"

# Self-signed end-entity certificates: no name at all, CN only, SAN only.
self_signed selfsigned-nodomains "/O=AFNetworking Tests/OU=No Domains" "basicConstraints=CA:FALSE"
self_signed selfsigned-cn-foobar "/CN=foobar.com" "basicConstraints=CA:FALSE"
self_signed selfsigned-san-foobar "/O=AFNetworking Tests/OU=Alt Name" "basicConstraints=CA:FALSE" \
    "subjectAltName=DNS:foobar.com"

# Expired leaf: `openssl ca` is the only 3.0 command that takes explicit dates.
newkey expired-leaf
openssl req -new -key "$OUT/keys/expired-leaf.key.pem" -subj "/CN=localhost" -out "$WORK/expired.csr"
mkdir -p "$WORK/ca"; : > "$WORK/ca/index.txt"; echo 1000 > "$WORK/ca/serial"
openssl x509 -inform DER -in "$OUT/intermediate-ca.cer" -out "$WORK/intermediate.pem"
cat > "$WORK/ca.cnf" <<EOF
[ca]
default_ca=test
[test]
database=$WORK/ca/index.txt
serial=$WORK/ca/serial
new_certs_dir=$WORK/ca
default_md=sha256
policy=any
unique_subject=no
[any]
commonName=supplied
[v3]
$LEAF_BASE
subjectAltName=DNS:localhost,IP:127.0.0.1
EOF
openssl ca -batch -config "$WORK/ca.cnf" -extensions v3 -notext \
    -cert "$WORK/intermediate.pem" -keyfile "$OUT/keys/intermediate-ca.key.pem" \
    -startdate 20000101000000Z -enddate 20010101000000Z \
    -in "$WORK/expired.csr" -out "$WORK/expired.pem" 2>/dev/null
openssl x509 -in "$WORK/expired.pem" -outform DER -out "$OUT/expired-leaf.cer"

# A forged leaf: signed by an impostor's key under the intermediate's name,
# without key identifiers, so a chain built by names alone links it to the
# real intermediate (whose key a policy may pin). The impostor's key is thrown away.
self_signed impostor-intermediate-ca "/O=AFNetworking Tests/CN=AFNetworking Test Intermediate CA" \
    "basicConstraints=critical,CA:TRUE" "keyUsage=critical,keyCertSign,cRLSign"
issue forged-leaf impostor-intermediate-ca "/CN=localhost" "$LEAF_BASE" \
    "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1" "authorityKeyIdentifier=none" "subjectKeyIdentifier=none"
rm -f "$OUT/impostor-intermediate-ca.cer" "$OUT/keys/impostor-intermediate-ca.key.pem"

echo "PKI written to $OUT"
