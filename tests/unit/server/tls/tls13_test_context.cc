#include "tests/unit/server/tls/tls13_test_context.h"

#include "server/tls/tls13/wire/server_messages.h"
#include "tests/unit/server/tls/tls13/ticket/test_keys.h"

namespace onepass::tls::testing {

std::unique_ptr<Tls13TestContext> Tls13TestContext::Create(std::string* why) {
  std::unique_ptr<Tls13TestContext> made(new Tls13TestContext());
  made->algorithms_ = tls13::SuiteAlgorithms::Create();
  if (made->algorithms_ == nullptr) {
    *why = "SuiteAlgorithms";
    return nullptr;
  }
  auto policy = tls13::MakeServerPolicy(kSuites, {"dot"}, /*tickets_per_handshake=*/1,
                                        /*allow_tls12=*/false);
  if (!policy.ok()) {
    *why = "policy: " + std::string(policy.status().message());
    return nullptr;
  }
  made->policy_ = *policy;
  made->certificate_message_ = tls13::EncodeCertificateMessage(made->pki_.chain_der());
  made->private_key_ = made->pki_.NewPrivateKey();
  if (made->private_key_ == nullptr) {
    *why = "private key";
    return nullptr;
  }
  made->ticket_keys_ = {tls13::testing::MakeKey(kTicketKeySeed)};
  made->keyring_ = tls13::TicketKeyring::Create(made->ticket_keys_);
  if (made->keyring_ == nullptr) {
    *why = "ticket keyring";
    return nullptr;
  }
  tls13::SessionContext& context = made->context_;
  context.algorithms = made->algorithms_.get();
  context.policy = &made->policy_;
  context.certificate_message = made->certificate_message_;
  context.private_key = made->private_key_;
  context.tickets = made->keyring_.get();
  return made;
}

Tls13TestContext::~Tls13TestContext() { EVP_PKEY_free(private_key_); }

}  // namespace onepass::tls::testing
