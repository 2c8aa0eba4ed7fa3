// FsOps::ReadTrusted, the one trusted-file reader, on the real file system:
// no symlink anywhere, a regular file within the bound, and every component
// from the root down owned by the one trusted owner and writable by nobody
// else. The tests run as root (as CI does) and make the untrusted shapes
// with chown and chmod.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "effects/fs_ops.h"
#include "effects/trusted_read_linux.h"
#include "tests/testing/fifo_probe.h"
#include "tests/testing/temp_dir.h"

namespace ocirlimit {
namespace {

constexpr uid_t kUser = 1000;
constexpr uid_t kNobody = 65534;

class ReadTrusted : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(geteuid(), 0u) << "needs root to chown (CI runs unit tests as root)";
    ASSERT_EQ(mkdir(Path("id").c_str(), 0711), 0) << strerror(errno);
    Write("id/state.json", "{}");
  }
  [[nodiscard]] std::string Path(const std::string& rel) const { return dir_ / rel; }
  void Write(const std::string& rel, const std::string& text) const {
    std::ofstream(Path(rel)) << text;
    ASSERT_EQ(chmod(Path(rel).c_str(), 0644), 0);
  }
  void Chown(const std::string& rel, uid_t uid) const {
    ASSERT_EQ(lchown(rel.empty() ? dir_.path().c_str() : Path(rel).c_str(), uid, uid), 0);
  }
  [[nodiscard]] Result<FsOps::TrustedText> Read(std::optional<uid_t> owner = 0,
                                                std::vector<std::string> components = {
                                                    "id", "state.json"}) const {
    auto direct = LinuxFsOps().ReadTrusted(dir_.path(), components, owner, 10);
    // The same through the root opened and checked once (audit's many reads
    // under one state root): alike in every case.
    const FsOps::TrustedRoot root = LinuxFsOps().OpenTrustedRoot(dir_.path(), owner);
    auto held = LinuxFsOps().ReadTrustedIn(root, components, 10);
    EXPECT_EQ(Refusal(direct), Refusal(held));
    if (!direct && !held) {
      EXPECT_EQ(direct.error().err, held.error().err);
    }
    if (direct && held) {
      EXPECT_EQ(direct->owner, held->owner);
    }
    return direct;
  }
  // The error, which must say `what`.
  static std::string Refusal(const Result<FsOps::TrustedText>& r) {
    return r ? std::string("read: ") + r->text : r.error().Text();
  }
  testsupport::TempDir dir_{"trusted"};
};

TEST_F(ReadTrusted, ReadsWhatRootWrote) {
  auto r = Read();
  ASSERT_TRUE(r) << r.error().Text();
  EXPECT_EQ(r->text, "{}");
  EXPECT_EQ(r->owner, 0u);
  auto unnamed = Read(std::nullopt);  // the root's owner: root
  ASSERT_TRUE(unnamed) << unnamed.error().Text();
  EXPECT_EQ(unnamed->owner, 0u);
}

TEST_F(ReadTrusted, ReadsAUsersOwnTreeAsThatUsers) {
  for (const char* p : {"", "id", "id/state.json"}) Chown(p, kUser);
  auto r = Read(std::nullopt);
  ASSERT_TRUE(r) << r.error().Text();
  EXPECT_EQ(r->text, "{}");
  EXPECT_EQ(r->owner, kUser);
  auto named = Read(kUser);
  ASSERT_TRUE(named) << named.error().Text();
  EXPECT_EQ(named->owner, kUser);
  // Root's reading of it: not root's.
  EXPECT_NE(Refusal(Read(0)).find("is owned by uid 1000, not root: not trusted"), std::string::npos)
      << Refusal(Read(0));
}

// One owner: root's file in a user's tree is not the user's, nor is the
// user's tree root's.
TEST_F(ReadTrusted, RefusesARootOwnedFileInAUsersTree) {
  for (const char* p : {"", "id"}) Chown(p, kUser);
  const std::string why = Refusal(Read(std::nullopt));
  EXPECT_NE(why.find("state.json\" is owned by uid 0, not uid 1000: not trusted"),
            std::string::npos)
      << why;
}

TEST_F(ReadTrusted, RefusesAFileAnotherUidOwns) {
  Chown("id/state.json", kNobody);
  const std::string why = Refusal(Read());
  EXPECT_NE(why.find("state.json\" is owned by uid 65534, not root"), std::string::npos) << why;
}

TEST_F(ReadTrusted, RefusesADirectoryAnotherUidOwns) {
  Chown("id", kNobody);
  const std::string why = Refusal(Read());
  EXPECT_NE(why.find("/id\" is owned by uid 65534, not root"), std::string::npos) << why;
}

TEST_F(ReadTrusted, RefusesARootAnotherUidOwns) {
  Chown("", kNobody);
  const std::string why = Refusal(Read());
  EXPECT_NE(why.find("is owned by uid 65534, not root"), std::string::npos) << why;
  // Named, the user is refused a tree of another user's too.
  EXPECT_NE(Refusal(Read(kUser)).find("is owned by uid 65534, not uid 1000"), std::string::npos);
}

TEST_F(ReadTrusted, RefusesAGroupWritableDirectory) {
  ASSERT_EQ(chmod(Path("id").c_str(), 0771), 0);
  const std::string why = Refusal(Read());
  EXPECT_NE(why.find("/id\" is writable by group or others: not trusted"), std::string::npos)
      << why;
}

TEST_F(ReadTrusted, RefusesAnOtherWritableFile) {
  ASSERT_EQ(chmod(Path("id/state.json").c_str(), 0646), 0);
  const std::string why = Refusal(Read());
  EXPECT_NE(why.find("state.json\" is writable by group or others"), std::string::npos) << why;
}

TEST_F(ReadTrusted, NeverFollowsASymlinkedFile) {
  Write("secret", "root only");
  ASSERT_EQ(unlink(Path("id/state.json").c_str()), 0);
  ASSERT_EQ(symlink(Path("secret").c_str(), Path("id/state.json").c_str()), 0);
  const std::string why = Refusal(Read());
  EXPECT_NE(why.find("state.json\" is a symlink, and no symlinks are followed"), std::string::npos)
      << why;
  // Nor one that stays beneath the root.
  ASSERT_EQ(unlink(Path("id/state.json").c_str()), 0);
  ASSERT_EQ(symlink("../secret", Path("id/state.json").c_str()), 0);
  EXPECT_NE(Refusal(Read()).find("is a symlink"), std::string::npos);
}

TEST_F(ReadTrusted, NeverFollowsASymlinkedComponent) {
  ASSERT_EQ(mkdir(Path("elsewhere").c_str(), 0700), 0);
  Write("elsewhere/state.json", "{}");
  ASSERT_EQ(symlink("elsewhere", Path("link").c_str()), 0);
  const std::string why = Refusal(Read(0, {"link", "state.json"}));
  EXPECT_NE(why.find("/link\" is a symlink"), std::string::npos) << why;
}

TEST_F(ReadTrusted, NeverFollowsASymlinkedRoot) {
  ASSERT_EQ(symlink(dir_.path().c_str(), Path("id/root").c_str()), 0);
  auto r = LinuxFsOps().ReadTrusted(Path("id/root"), {"id", "state.json"}, 0, 10);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().Text().find("/root\" is a symlink"), std::string::npos) << r.error().Text();
  const FsOps::TrustedRoot root = LinuxFsOps().OpenTrustedRoot(Path("id/root"), 0);
  EXPECT_FALSE(root.handle);
  auto held = LinuxFsOps().ReadTrustedIn(root, {"id", "state.json"}, 10);
  ASSERT_FALSE(held);
  EXPECT_EQ(held.error().Text(), r.error().Text());
}

// A root opened once is read beneath as it was checked: a directory renamed
// over its path afterwards is not read through it.
TEST_F(ReadTrusted, ARootOpenedOnceIsTheOneChecked) {
  const FsOps::TrustedRoot root = LinuxFsOps().OpenTrustedRoot(dir_.path(), 0);
  ASSERT_TRUE(root.handle);
  ASSERT_EQ(rename(Path("id").c_str(), Path("old").c_str()), 0);
  ASSERT_EQ(mkdir(Path("id").c_str(), 0711), 0);
  Write("id/state.json", "{\"new\":1}");
  auto r = LinuxFsOps().ReadTrustedIn(root, {"old", "state.json"}, 10);
  ASSERT_TRUE(r) << r.error().Text();
  EXPECT_EQ(r->text, "{}");
}

// procfs: read whole in as few reads as it takes, within the bound.
TEST(ReadProcFile, ReadsAProcFileWholeAndRefusesPastTheBound) {
  auto limits = LinuxFsOps().ReadProcFile("/proc/self/limits", 1 << 16);
  ASSERT_TRUE(limits) << limits.error().Text();
  EXPECT_TRUE(limits->starts_with("Limit")) << *limits;
  EXPECT_NE(limits->find("Max realtime timeout"), std::string::npos) << *limits;
  auto small = LinuxFsOps().ReadProcFile("/proc/self/limits", 100);
  ASSERT_FALSE(small);
  EXPECT_NE(small.error().Text().find("is larger than 100 bytes"), std::string::npos);
  EXPECT_EQ(LinuxFsOps().ReadProcFile("/proc/self/no-such", 100).error().err, ENOENT);
}

// Past the first 4 KiB read: /proc/self/maps made long with separate mappings.
TEST(ReadProcFile, ReadsPastItsFirstBuffer) {
  std::vector<void*> maps;
  for (int i = 0; i < 200; ++i) {
    const int prot = i % 2 == 0 ? PROT_READ : PROT_NONE;  // neighbours never merge
    maps.push_back(mmap(nullptr, 4096, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  }
  auto whole = LinuxFsOps().ReadProcFile("/proc/self/maps", 1 << 20);
  ASSERT_TRUE(whole) << whole.error().Text();
  EXPECT_GT(whole->size(), 8192u);
  EXPECT_EQ(whole->back(), '\n');
  // Every mapping made above is in what was read, the last one too (a
  // second read to compare with would differ: a sanitizer's allocator maps
  // memory between the two).
  for (void* m : maps) {
    char start[32];
    std::snprintf(start, sizeof start, "%lx-", reinterpret_cast<unsigned long>(m));
    EXPECT_NE(whole->find(start), std::string::npos) << start;
  }
  for (void* m : maps) munmap(m, 4096);
}

TEST_F(ReadTrusted, RefusesAFifoWithoutOpeningIt) {
  ASSERT_EQ(unlink(Path("id/state.json").c_str()), 0);
  ASSERT_EQ(mkfifo(Path("id/state.json").c_str(), 0644), 0);
  std::string why;
  EXPECT_FALSE(testsupport::OpenedToRead(Path("id/state.json"), [&] { why = Refusal(Read()); }));
  EXPECT_NE(why.find("state.json\" is not a regular file"), std::string::npos) << why;
}

// A file renamed over the checked one between the check and the
// open to read (a racing writer) is never read: the read compares device
// and inode with what the check saw.
TEST_F(ReadTrusted, AFileSwappedAfterTheCheckIsNotRead) {
  const int dir = open(Path("id").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(dir, 0);
  struct stat checked {};
  ASSERT_EQ(fstatat(dir, "state.json", &checked, AT_SYMLINK_NOFOLLOW), 0);
  auto same = ReadIfStillChecked(dir, "state.json", Path("id/state.json"), checked, 10);
  ASSERT_TRUE(same) << same.error().Text();
  EXPECT_EQ(*same, "{}");
  Write("id/swap", "{\"x\":1}");
  ASSERT_EQ(rename(Path("id/swap").c_str(), Path("id/state.json").c_str()), 0);
  auto swapped = ReadIfStillChecked(dir, "state.json", Path("id/state.json"), checked, 10);
  close(dir);
  ASSERT_FALSE(swapped) << *swapped;
  EXPECT_NE(swapped.error().Text().find("was replaced while it was read"), std::string::npos)
      << swapped.error().Text();
}

TEST_F(ReadTrusted, RefusesADirectoryAsTheFile) {
  const std::string why = Refusal(Read(0, {"id"}));
  EXPECT_NE(why.find("/id\" is not a regular file"), std::string::npos) << why;
  // A file where a directory must be.
  EXPECT_NE(Refusal(Read(0, {"id", "state.json", "x"})).find("is not a directory"),
            std::string::npos);
}

TEST_F(ReadTrusted, ReadsUpToTheBoundAndRefusesOneByteMore) {
  Write("id/state.json", "0123456789");
  auto r = Read();
  ASSERT_TRUE(r) << r.error().Text();
  EXPECT_EQ(r->text, "0123456789");
  Write("id/state.json", "0123456789+");
  const std::string why = Refusal(Read());
  EXPECT_NE(why.find("state.json\" is larger than 10 bytes"), std::string::npos) << why;
}

TEST_F(ReadTrusted, RefusesNamesThatLeaveTheRoot) {
  Write("secret", "s");
  for (const std::vector<std::string>& c :
       std::vector<std::vector<std::string>>{{"..", "secret"},
                                             {"id", "..", "secret"},
                                             {".", "secret"},
                                             {"", "secret"},
                                             {"id/../secret"},
                                             {"/secret"}}) {
    const std::string why = Refusal(Read(0, c));
    EXPECT_NE(why.find("not a plain file name"), std::string::npos) << why;
  }
  EXPECT_FALSE(Read(0, {}));
}

TEST_F(ReadTrusted, AMissingFileIsENOENT) {
  auto r = Read(0, {"other", "state.json"});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().err, ENOENT);
  auto leaf = Read(0, {"id", "status"});
  ASSERT_FALSE(leaf);
  EXPECT_EQ(leaf.error().err, ENOENT);
}

// Before Linux 5.6 there is no openat2: the walk is O_NOFOLLOW on each
// component. A child where openat2 fails ENOSYS (a seccomp filter) reads
// the same tree by the same rules.
TEST_F(ReadTrusted, WithoutOpenat2NoSymlinkIsFollowedEither) {
  ASSERT_EQ(mkdir(Path("elsewhere").c_str(), 0700), 0);
  Write("elsewhere/state.json", "{}");
  ASSERT_EQ(symlink("elsewhere", Path("link").c_str()), 0);
  ASSERT_EQ(symlink("state.json", Path("id/leaf").c_str()), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof filter / sizeof filter[0], filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
      _exit(10);
    }
    if (syscall(SYS_openat2, AT_FDCWD, "/", nullptr, 0) != -1 || errno != ENOSYS) _exit(11);
    auto ok = Read();
    if (!ok || ok->text != "{}") _exit(12);
    if (Refusal(Read(0, {"link", "state.json"})).find("/link\" is a symlink") ==
        std::string::npos) {
      _exit(13);
    }
    if (Refusal(Read(0, {"id", "leaf"})).find("/leaf\" is a symlink") == std::string::npos) {
      _exit(14);
    }
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10: no filter, 11: openat2 still there, 12: no read, "
                                       "13: a symlinked directory followed, 14: a symlinked file";
}

}  // namespace
}  // namespace ocirlimit
