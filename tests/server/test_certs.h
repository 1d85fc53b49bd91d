#pragma once
// Test PKI generated at test time with the OpenSSL C API: nothing secret is checked in and
// nothing expires in the repository.

#include <filesystem>
#include <string>
#include <vector>

namespace hamisim::testing {

struct CertFiles {
  std::string cert;  // PEM certificate path
  std::string key;   // PEM private key path
};

enum class CertUsage { kServer, kClient };

struct CertSpec {
  std::string common_name;
  std::vector<std::string> dns_names;
  std::vector<std::string> ip_addresses;
  CertUsage usage = CertUsage::kClient;
};

// A CA in its own temporary directory (removed by the destructor) that issues leaf
// certificates. EC P-256 keys, SHA-256 signatures, valid from an hour ago for a day.
class TestCa {
 public:
  // `name` is the CA's CN and part of the directory name.
  explicit TestCa(const std::string& name = "hamisim-test-ca");
  // Shares `dir` with another CA (no cleanup of `dir` by this one).
  TestCa(const std::string& name, const std::filesystem::path& dir);
  ~TestCa();
  TestCa(const TestCa&) = delete;
  TestCa& operator=(const TestCa&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  const std::string& ca_cert() const { return ca_files_.cert; }

  // Writes <dir>/<file_stem>.crt and .key (replacing them atomically if they exist).
  CertFiles issue(const CertSpec& spec, const std::string& file_stem);
  // Writes a certificate and key for `spec` to exactly these paths via rename, as a Secret
  // volume update would.
  void issue_to(const CertSpec& spec, const std::string& cert_path, const std::string& key_path);

 private:
  struct State;
  std::filesystem::path dir_;
  bool owns_dir_;
  CertFiles ca_files_;
  State* state_;
};

// The standard set the server tests use: a CA, a server certificate for 127.0.0.1/localhost,
// client certificates "kube-scheduler" and "cluster-autoscaler", and a client certificate
// "intruder" issued by another CA.
struct TestPki {
  TestPki();
  TestCa ca;
  TestCa other_ca;
  CertFiles server, scheduler, autoscaler, untrusted;
};

// Writes `content` to `path` atomically (temp file + rename).
void write_file_atomically(const std::string& path, const std::string& content);

}  // namespace hamisim::testing
