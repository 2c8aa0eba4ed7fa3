#include "effects/files.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "tests/testing/temp_dir.h"

namespace ocirlimit {
namespace {

namespace fs = std::filesystem;

class FilesTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) const { return dir_ / name; }

  void Write(const std::string& path, const std::string& content, mode_t mode = 0644) const {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
    ASSERT_EQ(chmod(path.c_str(), mode), 0) << strerror(errno);
  }

  static std::string Read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  std::vector<std::string> Entries() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_.path())) out.push_back(e.path().filename());
    std::sort(out.begin(), out.end());
    return out;
  }

  testsupport::TempDir dir_{"files"};
};

// --- ReadFileBounded ---

TEST_F(FilesTest, ReadFileBoundedReadsARegularFile) {
  Write(Path("f"), "hello\nworld\n");
  auto r = ReadFileBounded(Path("f"), 1024);
  ASSERT_TRUE(r.ok()) << r.error().Text();
  EXPECT_EQ(*r, "hello\nworld\n");
}

TEST_F(FilesTest, ReadFileBoundedAcceptsExactlyTheLimit) {
  Write(Path("f"), std::string(100, 'x'));
  auto r = ReadFileBounded(Path("f"), 100);
  ASSERT_TRUE(r.ok()) << r.error().Text();
  EXPECT_EQ(r->size(), 100u);
}

TEST_F(FilesTest, ReadFileBoundedRefusesTooBig) {
  Write(Path("f"), std::string(101, 'x'));
  auto r = ReadFileBounded(Path("f"), 100);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().Text(), "\"" + Path("f") + "\" is larger than 100 bytes");
}

TEST_F(FilesTest, ReadFileBoundedRefusesADirectory) {
  auto r = ReadFileBounded(dir_.path(), 1024);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().Text(), "\"" + dir_.path() + "\" is not a regular file");
}

TEST_F(FilesTest, ReadFileBoundedRefusesAFifoWithoutBlocking) {
  ASSERT_EQ(mkfifo(Path("fifo").c_str(), 0600), 0) << strerror(errno);
  auto r = ReadFileBounded(Path("fifo"), 1024);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().Text().find("is not a regular file"), std::string::npos) << r.error().Text();
}

TEST_F(FilesTest, ReadFileBoundedMissingIsEnoent) {
  auto r = ReadFileBounded(Path("missing"), 1024);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().err, ENOENT);
  EXPECT_NE(r.error().Text().find(Path("missing")), std::string::npos) << r.error().Text();
}

// --- ReadFdBounded ---

class Pipe {
 public:
  Pipe() { EXPECT_EQ(pipe2(fds_, O_CLOEXEC), 0) << strerror(errno); }
  ~Pipe() {
    CloseRead();
    CloseWrite();
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  int read_end() const { return fds_[0]; }
  int write_end() const { return fds_[1]; }
  void Put(const std::string& data) {
    ASSERT_EQ(write(fds_[1], data.data(), data.size()), static_cast<ssize_t>(data.size()));
  }
  void CloseWrite() {
    if (fds_[1] >= 0) close(fds_[1]);
    fds_[1] = -1;
  }
  void CloseRead() {
    if (fds_[0] >= 0) close(fds_[0]);
    fds_[0] = -1;
  }

 private:
  int fds_[2] = {-1, -1};
};

TEST(ReadFdBounded, ReadsToEof) {
  Pipe p;
  p.Put(R"({"id":"a"})");
  p.CloseWrite();
  auto r = ReadFdBounded(p.read_end(), 1024, 5000);
  ASSERT_TRUE(r.ok()) << r.error().Text();
  EXPECT_EQ(*r, R"({"id":"a"})");
}

TEST(ReadFdBounded, EmptyInputIsEmpty) {
  Pipe p;
  p.CloseWrite();
  auto r = ReadFdBounded(p.read_end(), 1024, 5000);
  ASSERT_TRUE(r.ok()) << r.error().Text();
  EXPECT_EQ(*r, "");
}

TEST(ReadFdBounded, RefusesTooMuch) {
  Pipe p;
  p.Put(std::string(11, 'x'));
  p.CloseWrite();
  auto r = ReadFdBounded(p.read_end(), 10, 5000);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().Text(), "input is larger than 10 bytes");
}

TEST(ReadFdBounded, FailsWhenTheWriterNeverCloses) {
  Pipe p;
  p.Put("{\"id\":");  // and then nothing, with the write end held open
  auto r = ReadFdBounded(p.read_end(), 1024, 200);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().Text(), "no end of input after 200 ms");
}

TEST(ReadFdBounded, BadFdIsAnError) {
  auto r = ReadFdBounded(-1, 1024, 200);
  EXPECT_FALSE(r.ok());
}

// --- AtomicWriteFile ---

TEST_F(FilesTest, AtomicWriteReplacesContentAndKeepsMode) {
  Write(Path("config.json"), "old content that is longer than the new one", 0600);
  Status st = AtomicWriteFile(Path("config.json"), "{\"new\":1}");
  ASSERT_TRUE(st.ok()) << st.error().Text();
  EXPECT_EQ(Read(Path("config.json")), "{\"new\":1}");
  struct stat s {};
  ASSERT_EQ(stat(Path("config.json").c_str(), &s), 0);
  EXPECT_EQ(s.st_mode & 07777, 0600u);
  EXPECT_EQ(Entries(), (std::vector<std::string>{"config.json"})) << "no temp file left";
}

TEST_F(FilesTest, AtomicWriteKeepsAnotherMode) {
  Write(Path("f"), "a", 0754);
  ASSERT_TRUE(AtomicWriteFile(Path("f"), "b").ok());
  struct stat s {};
  ASSERT_EQ(stat(Path("f").c_str(), &s), 0);
  EXPECT_EQ(s.st_mode & 07777, 0754u);
  EXPECT_EQ(Read(Path("f")), "b");
}

// audit's textfile (issue 38): 0644 under umask 077, and a 0600 file from
// before is replaced by a 0644 one.
TEST_F(FilesTest, AtomicWriteModeSetsTheModeWhateverTheUmaskAndTheOldFile) {
  const mode_t old_umask = umask(077);
  Write(Path("t.prom"), "a", 0600);
  Status st = AtomicWriteFileMode(Path("t.prom"), "b", 0644);
  umask(old_umask);
  ASSERT_TRUE(st.ok()) << st.error().Text();
  struct stat s {};
  ASSERT_EQ(stat(Path("t.prom").c_str(), &s), 0);
  EXPECT_EQ(s.st_mode & 07777, 0644u);
  EXPECT_EQ(Read(Path("t.prom")), "b");
  EXPECT_EQ(Entries(), (std::vector<std::string>{"t.prom"})) << "no temp file left";
}

// chown(2) clears setuid (and setgid on a group-executable file), so the
// owner must be set before the mode; 0600 would not show it, mkostemp's own.
TEST_F(FilesTest, AtomicWriteKeepsSetuidSetgidAndOwner) {
  for (mode_t mode : {06644u, 06755u, 0640u, 0644u, 01777u}) {
    Write(Path("f"), "a", mode);
    ASSERT_EQ(chown(Path("f").c_str(), 65534, 65534), 0) << strerror(errno);
    ASSERT_EQ(chmod(Path("f").c_str(), mode), 0) << strerror(errno);  // chown cleared bits
    Status st = AtomicWriteFile(Path("f"), "b");
    ASSERT_TRUE(st.ok()) << st.error().Text();
    struct stat s {};
    ASSERT_EQ(stat(Path("f").c_str(), &s), 0);
    EXPECT_EQ(s.st_mode & 07777, mode) << std::oct << mode;
    EXPECT_EQ(s.st_uid, 65534u);
    EXPECT_EQ(s.st_gid, 65534u);
  }
}

// Records each fsync: which file the fd is, and what `path` held then.
class RecordingSync final : public SyncOps {
 public:
  explicit RecordingSync(std::string path, const char* fail = nullptr)
      : path_(std::move(path)), fail_(fail) {}
  Status Fsync(int fd, const char* what) override {
    char target[4096] = {};
    ssize_t n =
        readlink(("/proc/self/fd/" + std::to_string(fd)).c_str(), target, sizeof target - 1);
    std::ifstream in(path_, std::ios::binary);
    std::stringstream content;
    content << in.rdbuf();
    calls.push_back(
        {what, n > 0 ? std::string(target, static_cast<size_t>(n)) : "?", content.str()});
    if (fail_ != nullptr && std::string(fail_) == what) return MakeError("fsync", EIO);
    return Ok{};
  }
  struct Call {
    std::string what, fd_path, content_then;
  };
  std::vector<Call> calls;

 private:
  std::string path_;
  const char* fail_;
};

TEST_F(FilesTest, AtomicWriteFsyncsTheTempFileBeforeTheRenameAndTheDirectoryAfter) {
  Write(Path("config.json"), "old");
  RecordingSync sync(Path("config.json"));
  ASSERT_TRUE(AtomicWriteFile(Path("config.json"), "new", sync).ok());
  ASSERT_EQ(sync.calls.size(), 2u);
  EXPECT_EQ(sync.calls[0].what, "file");
  EXPECT_TRUE(fs::path(sync.calls[0].fd_path).filename().string().starts_with(".oci-rlimit."))
      << sync.calls[0].fd_path;
  EXPECT_EQ(fs::path(sync.calls[0].fd_path).parent_path(), fs::path(dir_.path()));
  EXPECT_EQ(sync.calls[0].content_then, "old") << "the file was synced after the rename";
  EXPECT_EQ(sync.calls[1].what, "directory");
  EXPECT_EQ(sync.calls[1].fd_path, dir_.path());
  EXPECT_EQ(sync.calls[1].content_then, "new") << "the directory was synced before the rename";
}

TEST_F(FilesTest, AtomicWriteWhoseFileFsyncFailsLeavesTheOldFile) {
  Write(Path("config.json"), "old");
  RecordingSync sync(Path("config.json"), "file");
  Status st = AtomicWriteFile(Path("config.json"), "new", sync);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().err, EIO);
  EXPECT_NE(st.error().Text().find("replace \"" + Path("config.json") + "\""), std::string::npos)
      << st.error().Text();
  EXPECT_EQ(Read(Path("config.json")), "old");
  EXPECT_EQ(Entries(), (std::vector<std::string>{"config.json"})) << "no temp file left";
}

TEST_F(FilesTest, AtomicWriteWhoseDirectoryFsyncFailsIsAnError) {
  Write(Path("config.json"), "old");
  RecordingSync sync(Path("config.json"), "directory");
  Status st = AtomicWriteFile(Path("config.json"), "new", sync);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().err, EIO);
  EXPECT_EQ(Entries(), (std::vector<std::string>{"config.json"}));
}

TEST_F(FilesTest, AtomicWriteRefusesASymlink) {
  Write(Path("target"), "target content");
  ASSERT_EQ(symlink(Path("target").c_str(), Path("link").c_str()), 0) << strerror(errno);
  Status st = AtomicWriteFile(Path("link"), "new");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().Text().find("is a symlink"), std::string::npos) << st.error().Text();
  EXPECT_EQ(Read(Path("target")), "target content");
  EXPECT_TRUE(fs::is_symlink(Path("link")));
  EXPECT_EQ(Entries(), (std::vector<std::string>{"link", "target"}));
}

TEST_F(FilesTest, AtomicWriteRefusesADirectoryAndAMissingFile) {
  ASSERT_EQ(mkdir(Path("d").c_str(), 0755), 0);
  EXPECT_FALSE(AtomicWriteFile(Path("d"), "x").ok());
  Status st = AtomicWriteFile(Path("missing"), "x");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().err, ENOENT);
  EXPECT_EQ(Entries(), (std::vector<std::string>{"d"}));
}

// --- AppendLine ---

TEST_F(FilesTest, AppendLineCreatesAndAppends) {
  ASSERT_TRUE(AppendLine(Path("log"), "first").ok());
  ASSERT_TRUE(AppendLine(Path("log"), "second").ok());
  EXPECT_EQ(Read(Path("log")), "first\nsecond\n");
}

TEST_F(FilesTest, AppendLineKeepsWhatWasThere) {
  Write(Path("log"), "earlier\n");
  ASSERT_TRUE(AppendLine(Path("log"), "later").ok());
  EXPECT_EQ(Read(Path("log")), "earlier\nlater\n");
}

TEST_F(FilesTest, AppendLineRefusesASymlink) {
  Write(Path("target"), "");
  ASSERT_EQ(symlink(Path("target").c_str(), Path("log").c_str()), 0);
  Status st = AppendLine(Path("log"), "x");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().err, ELOOP);
  EXPECT_EQ(Read(Path("target")), "");
}

// Never a wait: a FIFO with no reader, one with a reader, a socket and a
// directory are each refused at once, and nothing is written to them.
TEST_F(FilesTest, AppendLineRefusesWhatIsNotARegularFileWithoutBlocking) {
  ASSERT_EQ(mkfifo(Path("fifo").c_str(), 0644), 0);
  Status st = AppendLine(Path("fifo"), "x");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().err, ENXIO) << st.error().Text();

  int reader = open(Path("fifo").c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(reader, 0) << strerror(errno);
  st = AppendLine(Path("fifo"), "x");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().Text(), "log \"" + Path("fifo") + "\" is not a regular file");
  char byte = 0;
  EXPECT_EQ(read(reader, &byte, 1), 0) << "nothing reached the FIFO";
  close(reader);

  int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(sock, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", Path("sock").c_str());
  ASSERT_EQ(bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << strerror(errno);
  st = AppendLine(Path("sock"), "x");
  close(sock);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().err, ENXIO) << st.error().Text();

  ASSERT_EQ(mkdir(Path("dir").c_str(), 0755), 0);
  st = AppendLine(Path("dir"), "x");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().err, EISDIR) << st.error().Text();
}

// --- a line written whole or not at all ---

// write(2) that writes only half and says so, as a full disk does.
ssize_t HalfWrite(int fd, const void* buf, size_t n) { return write(fd, buf, n / 2); }
// write(2) that writes nothing: ENOSPC.
ssize_t NoSpaceWrite(int, const void*, size_t) {
  errno = ENOSPC;
  return -1;
}

struct TornCase {
  const char* name;
  WriteFn write_fn;
  const char* why;
};
void PrintTo(const TornCase& c, std::ostream* os) { *os << c.name; }

class AppendWholeTest : public FilesTest, public ::testing::WithParamInterface<TornCase> {};

TEST_P(AppendWholeTest, DropsAndCountsALineItCannotWriteWhole) {
  Write(Path("log"), "before\n");
  int fd = open(Path("log").c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  ASSERT_GE(fd, 0) << strerror(errno);
  const uint64_t dropped = LogLinesDropped();
  Status st = AppendWhole(fd, Path("log"), "a line that does not fit\n", GetParam().write_fn);
  close(fd);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().Text().rfind(
                "log \"" + Path("log") + "\": a line of 25 bytes dropped, nothing written (", 0),
            0u)
      << st.error().Text();
  EXPECT_NE(st.error().Text().find(GetParam().why), std::string::npos) << st.error().Text();
  EXPECT_EQ(Read(Path("log")), "before\n") << "no torn line left behind";
  EXPECT_EQ(LogLinesDropped(), dropped + 1);
}

INSTANTIATE_TEST_SUITE_P(Files, AppendWholeTest,
                         ::testing::Values(TornCase{"ShortWrite", HalfWrite, "short write of 12"},
                                           TornCase{"NoSpace", NoSpaceWrite,
                                                    "No space left on device"}),
                         [](const auto& info) { return std::string(info.param.name); });

// The kernel's own refusal: under RLIMIT_FSIZE a write past the limit is
// short (then EFBIG), as on a full disk. In a child, with SIGXFSZ ignored.
TEST_F(FilesTest, AppendLineAtTheFileSizeLimitWritesNothing) {
  Write(Path("log"), "0123456789\n");
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    signal(SIGXFSZ, SIG_IGN);
    rlimit lim{16, 16};
    if (setrlimit(RLIMIT_FSIZE, &lim) != 0) _exit(2);
    Status st = AppendLine(Path("log"), "a line longer than five bytes");
    _exit(!st.ok() && LogLinesDropped() == 1 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "AppendLine succeeded, or did not count the line";
  EXPECT_EQ(Read(Path("log")), "0123456789\n") << "no torn line left behind";
}

// --- WriteAll ---

TEST(WriteAll, WritesEverything) {
  Pipe p;
  ASSERT_TRUE(WriteAll(-1, "").ok()) << "nothing to write is not an error";
  std::string data(10000, 'z');
  ASSERT_TRUE(WriteAll(p.write_end(), data).ok());
  p.CloseWrite();
  auto r = ReadFdBounded(p.read_end(), 20000, 5000);
  ASSERT_TRUE(r.ok()) << r.error().Text();
  EXPECT_EQ(*r, data);
}

}  // namespace
}  // namespace ocirlimit
