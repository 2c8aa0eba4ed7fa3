// A stand-in for `nvidia-ctk runtime configure --runtime=containerd
// --set-as-default`, as it behaves (docs/deployment.md, the containerd installer): loads
// containerd's config, adds handler "nvidia" (a copy of runc with NVIDIA's
// BinaryName) in the section the file's version reads, sets
// default_runtime_name = "nvidia", and writes the whole file back from the
// parsed form, so every comment is gone.
//   toml_rewrite FILE
#include <toml++/toml.h>

#include <fstream>
#include <iostream>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: toml_rewrite FILE\n";
    return 2;
  }
  try {
    toml::table t = toml::parse_file(argv[1]);
    const char* plugin = t["version"].value_or(int64_t{2}) == 3 ? "io.containerd.cri.v1.runtime"
                                                                : "io.containerd.grpc.v1.cri";
    toml::table* ctd = t["plugins"][plugin]["containerd"].as_table();
    if (ctd == nullptr || !(*ctd)["runtimes"]["runc"].is_table()) {
      std::cerr << "toml_rewrite: no runc handler under " << plugin << "\n";
      return 1;
    }
    toml::table nv = *(*ctd)["runtimes"]["runc"].as_table();
    if (!nv["options"].is_table()) nv.insert_or_assign("options", toml::table{});
    nv["options"].as_table()->insert_or_assign("BinaryName", "/usr/bin/nvidia-container-runtime");
    (*ctd)["runtimes"].as_table()->insert_or_assign("nvidia", nv);
    ctd->insert_or_assign("default_runtime_name", "nvidia");
    std::ofstream out(argv[1], std::ios::trunc);
    out << t << "\n";
    return out ? 0 : 1;
  } catch (const toml::parse_error& e) {
    std::cerr << "toml_rewrite: " << e.description() << "\n";
    return 1;
  }
}
