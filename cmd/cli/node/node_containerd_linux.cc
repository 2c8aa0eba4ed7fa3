#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "cli/node/node_containerd.h"
#include "effects/files.h"
#include "formats/text.h"
#include "node/node_config.h"

namespace ocirlimit::node {
namespace {

constexpr size_t kMaxConfigBytes = 4 << 20;

Status Write(const std::string& path, const std::string& text, bool create) {
  if (create) {
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return MakeError("create " + Quote(path), errno);
    close(fd);
  }
  auto st = AtomicWriteFile(path, text);
  if (!st && create) unlink(path.c_str());
  return st;
}

int Fail(std::ostream& err, const Error& e) {
  err << "oci-rlimit: " << e.Text() << "\n";
  return 1;
}

}  // namespace

int RunContainerdEdit(const ContainerdArgs& a, std::ostream& out, std::ostream& err) {
  auto text = ReadFileBounded(a.config, kMaxConfigBytes);
  const bool missing = !text && text.error().err == ENOENT;
  if (!text && !(missing && a.action == "install")) {
    if (!missing) return Fail(err, text.error());
    out << "changed=no\n";
    return 0;
  }
  const std::string current = missing ? std::string() : *text;
  Result<ConfigEdit> edit = a.action == "install"
                                ? InstallHandler(current, a.config, {a.name, a.binary, a.base})
                                : UninstallHandler(current, a.config, a.name, a.added_default);
  if (!edit) return Fail(err, edit.error());
  for (const auto& n : edit->notes) err << "oci-rlimit: " << n << "\n";
  bool deleted = false;
  if (a.action == "uninstall" && a.delete_if_empty && edit->only_version) {
    if (unlink(a.config.c_str()) != 0) {
      return Fail(err, MakeError("remove " + Quote(a.config), errno));
    }
    deleted = true;
  } else if (edit->changed || missing) {
    if (auto st = Write(a.config, edit->text, missing); !st) return Fail(err, st.error());
  }
  out << "changed=" << (edit->changed || missing || deleted ? "yes" : "no") << "\n"
      << "version=" << edit->version << "\n"
      << "base-binary=" << edit->base_binary << "\n"
      << "deleted=" << (deleted ? "yes" : "no") << "\n";
  return 0;
}

}  // namespace ocirlimit::node
