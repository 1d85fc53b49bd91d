#include "test_certs.h"

#include <unistd.h>

#include <atomic>
#include <fstream>
#include <random>
#include <stdexcept>

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace hamisim::testing {
namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error("test certificates: " + what);
}

EVP_PKEY* new_key() {
  EVP_PKEY* key = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
  if (key == nullptr) fail("EC key generation");
  return key;
}

std::string pem_of_cert(X509* cert) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(bio, cert);
  char* data = nullptr;
  long len = BIO_get_mem_data(bio, &data);
  std::string out(data, size_t(len));
  BIO_free(bio);
  return out;
}

std::string pem_of_key(EVP_PKEY* key) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long len = BIO_get_mem_data(bio, &data);
  std::string out(data, size_t(len));
  BIO_free(bio);
  return out;
}

void add_ext(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (ext == nullptr) fail("extension " + value);
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

std::atomic<long> next_serial{1000};

X509* make_cert(const std::string& cn, EVP_PKEY* key, X509* issuer, EVP_PKEY* issuer_key,
                bool is_ca, const CertSpec* spec) {
  X509* cert = X509_new();
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), next_serial++);
  X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert), 24 * 3600);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("hamisim tests"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509* signer = issuer ? issuer : cert;
  X509_set_issuer_name(cert, X509_get_subject_name(signer));
  add_ext(cert, signer, NID_subject_key_identifier, "hash");
  add_ext(cert, signer, NID_authority_key_identifier, "keyid:always");
  if (is_ca) {
    add_ext(cert, signer, NID_basic_constraints, "critical,CA:TRUE");
    add_ext(cert, signer, NID_key_usage, "critical,keyCertSign,cRLSign");
  } else {
    add_ext(cert, signer, NID_basic_constraints, "critical,CA:FALSE");
    add_ext(cert, signer, NID_key_usage, "critical,digitalSignature,keyEncipherment");
    add_ext(cert, signer, NID_ext_key_usage,
            spec->usage == CertUsage::kServer ? "serverAuth" : "clientAuth");
    std::string san;
    for (const auto& d : spec->dns_names) san += (san.empty() ? "DNS:" : ",DNS:") + d;
    for (const auto& ip : spec->ip_addresses) san += (san.empty() ? "IP:" : ",IP:") + ip;
    if (!san.empty()) add_ext(cert, signer, NID_subject_alt_name, san);
  }
  if (X509_sign(cert, issuer_key ? issuer_key : key, EVP_sha256()) == 0) fail("sign " + cn);
  return cert;
}

std::filesystem::path make_temp_dir(const std::string& name) {
  std::string tmpl = (std::filesystem::temp_directory_path() / (name + "-XXXXXX")).string();
  if (::mkdtemp(tmpl.data()) == nullptr) fail("mkdtemp");
  return tmpl;
}

}  // namespace

void write_file_atomically(const std::string& path, const std::string& content) {
  static std::atomic<int> counter{0};
  std::string tmp = path + ".tmp" + std::to_string(::getpid()) + "." + std::to_string(counter++);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << content;
    if (!out) fail("write " + tmp);
  }
  std::filesystem::rename(tmp, path);
}

struct TestCa::State {
  EVP_PKEY* key = nullptr;
  X509* cert = nullptr;
  ~State() {
    X509_free(cert);
    EVP_PKEY_free(key);
  }
};

TestCa::TestCa(const std::string& name) : TestCa(name, make_temp_dir(name)) {
  owns_dir_ = true;
}

TestCa::TestCa(const std::string& name, const std::filesystem::path& dir)
    : dir_(dir), owns_dir_(false), state_(new State) {
  state_->key = new_key();
  state_->cert = make_cert(name, state_->key, nullptr, nullptr, true, nullptr);
  ca_files_.cert = (dir_ / (name + ".crt")).string();
  ca_files_.key = (dir_ / (name + ".key")).string();
  write_file_atomically(ca_files_.cert, pem_of_cert(state_->cert));
  write_file_atomically(ca_files_.key, pem_of_key(state_->key));
}

TestCa::~TestCa() {
  delete state_;
  if (owns_dir_) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

void TestCa::issue_to(const CertSpec& spec, const std::string& cert_path,
                      const std::string& key_path) {
  EVP_PKEY* key = new_key();
  X509* cert = make_cert(spec.common_name, key, state_->cert, state_->key, false, &spec);
  std::string cert_pem = pem_of_cert(cert), key_pem = pem_of_key(key);
  X509_free(cert);
  EVP_PKEY_free(key);
  write_file_atomically(key_path, key_pem);
  write_file_atomically(cert_path, cert_pem);
}

CertFiles TestCa::issue(const CertSpec& spec, const std::string& file_stem) {
  CertFiles f{(dir_ / (file_stem + ".crt")).string(), (dir_ / (file_stem + ".key")).string()};
  issue_to(spec, f.cert, f.key);
  return f;
}

TestPki::TestPki() : ca("hamisim-test-ca"), other_ca("other-ca", ca.dir()) {
  server = ca.issue({"hamisim", {"localhost"}, {"127.0.0.1", "::1"}, CertUsage::kServer}, "server");
  scheduler = ca.issue({"kube-scheduler", {}, {}, CertUsage::kClient}, "kube-scheduler");
  autoscaler = ca.issue(
      {"cluster-autoscaler", {"cluster-autoscaler.kube-system.svc"}, {}, CertUsage::kClient},
      "cluster-autoscaler");
  untrusted = other_ca.issue({"intruder", {}, {}, CertUsage::kClient}, "intruder");
}

}  // namespace hamisim::testing
