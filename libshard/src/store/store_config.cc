// StoreConfig::FromEnvironment: the AWS environment variables and profile files.
#include <cstdlib>
#include <map>
#include <sstream>
#include <utility>

#include "libshard/store/store_config.h"
#include "libshard/util/strings.h"
#include "store/s3/aws_profile.h"

namespace libshard::store {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::string HomeFile(const char* env, const char* relative) {
  std::string p = Env(env);
  if (!p.empty()) return p;
  const std::string home = Env("HOME");
  return home.empty() ? std::string() : home + "/" + relative;
}

}  // namespace

Status CheckEndpoint(const std::string& endpoint, const std::string& source) {
  const size_t sep = endpoint.find("://");
  const size_t host = sep == std::string::npos ? 0 : sep + 3;
  const size_t at = endpoint.find('@', host);
  const bool has_user_info = at != std::string::npos && at < endpoint.find('/', host);
  // The endpoint as messages may show it: user-info dropped.
  const std::string shown =
      has_user_info ? endpoint.substr(0, host) + "<user-info removed>" + endpoint.substr(at) : endpoint;
  if (!util::StartsWith(endpoint, "http://") && !util::StartsWith(endpoint, "https://")) {
    return InvalidArgumentError(source + ": endpoint '" + shown +
                                "': expected http://HOST[:PORT] or https://HOST[:PORT]");
  }
  if (has_user_info) {
    return InvalidArgumentError(source + ": endpoint '" + shown +
                                "': user-info (USER:PASSWORD@) in an endpoint is refused; give credentials with "
                                "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY or a profile");
  }
  return Status::OK();
}

StatusOr<StoreConfig> StoreConfig::FromEnvironment() {
  StoreConfig c;
  std::string profile = Env("AWS_PROFILE");
  if (profile.empty()) profile = Env("AWS_DEFAULT_PROFILE");
  const bool named_profile = !profile.empty();
  if (profile.empty()) profile = "default";

  const std::string cred_path = HomeFile("AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials");
  const std::string conf_path = HomeFile("AWS_CONFIG_FILE", ".aws/config");
  AwsProfileFile creds, conf;
  if (!cred_path.empty()) {
    LIBSHARD_ASSIGN_OR_RETURN(creds, ReadAwsProfile(cred_path, "credentials file"));
  }
  if (!conf_path.empty()) {
    LIBSHARD_ASSIGN_OR_RETURN(conf, ReadAwsProfile(conf_path, "config file"));
  }
  const std::string conf_section = profile == "default" ? "default" : "profile " + profile;
  const bool in_creds = creds.count(profile) > 0, in_conf = conf.count(conf_section) > 0;
  if (named_profile && !in_creds && !in_conf) {
    return InvalidArgumentError("AWS_PROFILE=" + profile + ": no such profile in " + cred_path + " or " + conf_path);
  }
  std::map<std::string, std::string> settings;
  if (in_conf) settings = conf[conf_section];
  if (in_creds) {
    for (const auto& [k, v] : creds[profile]) settings[k] = v;
  }
  auto setting = [&](const std::string& env, const std::string& key) {
    std::string v = Env(env.c_str());
    if (!v.empty()) return v;
    auto it = settings.find(key);
    return it == settings.end() ? std::string() : it->second;
  };

  // Credentials come as a set: all from the environment, else all from the
  // profile (a key in the environment never pairs with a file's secret).
  if (!Env("AWS_ACCESS_KEY_ID").empty()) {
    c.access_key_id = Env("AWS_ACCESS_KEY_ID");
    c.secret_access_key = Env("AWS_SECRET_ACCESS_KEY");
    c.session_token = Env("AWS_SESSION_TOKEN");
    if (c.secret_access_key.empty()) {
      return InvalidArgumentError("AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not");
    }
  } else {
    c.access_key_id = settings["aws_access_key_id"];
    c.secret_access_key = settings["aws_secret_access_key"];
    c.session_token = settings["aws_session_token"];
    if (!c.access_key_id.empty() && c.secret_access_key.empty()) {
      return InvalidArgumentError("profile " + profile + " has aws_access_key_id but no aws_secret_access_key");
    }
  }
  std::string region = Env("AWS_REGION");
  if (region.empty()) region = setting("AWS_DEFAULT_REGION", "region");
  if (!region.empty()) c.region = region;

  std::string endpoint, source;
  for (const char* var : {"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"}) {
    if (endpoint.empty()) endpoint = Env(var), source = var;
  }
  for (const char* key : {"s3.endpoint_url", "endpoint_url"}) {
    if (endpoint.empty()) endpoint = settings[key], source = "profile " + profile + " " + key;
  }
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
  if (!endpoint.empty()) LIBSHARD_RETURN_IF_ERROR(CheckEndpoint(endpoint, source));
  c.endpoint = endpoint;
  c.ca_bundle = setting("AWS_CA_BUNDLE", "ca_bundle");

  const std::string attempts = setting("AWS_MAX_ATTEMPTS", "max_attempts");
  if (!attempts.empty()) {
    char* end = nullptr;
    const long n = std::strtol(attempts.c_str(), &end, 10);
    if (*end != '\0' || n < 1 || n > 100) {
      return InvalidArgumentError("AWS_MAX_ATTEMPTS=" + attempts + ": expected an integer in 1..100");
    }
    c.retry.max_attempts = static_cast<int>(n);
  }
  for (auto [var, field] : {std::pair{"LIBSHARD_DEADLINE_BASE_S", &c.retry.deadline_base_s},
                            std::pair{"LIBSHARD_DEADLINE_MIN_RATE", &c.retry.deadline_min_rate}}) {
    const std::string v = Env(var);
    if (v.empty()) continue;
    char* end = nullptr;
    const double d = std::strtod(v.c_str(), &end);
    if (*end != '\0' || !(d >= 0 && d <= 1e12)) {
      return InvalidArgumentError(std::string(var) + "=" + v + ": expected a number in 0..1e12");
    }
    *field = d;
  }
  return c;
}

std::string StoreConfig::Describe() const {
  std::ostringstream s;
  s << "endpoint " << (endpoint.empty() ? "AWS (virtual-hosted)" : endpoint) << ", region " << region << ", "
    << (access_key_id.empty() ? "anonymous" : "access key " + access_key_id.substr(0, 4) + "...");
  return s.str();
}

}  // namespace libshard::store
