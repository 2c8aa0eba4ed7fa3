#include "effects/files.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace ocirlimit {
namespace {

namespace fs = std::filesystem;

class FilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "oci-rlimit-files-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr) << strerror(errno);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

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
    for (const auto& e : fs::directory_iterator(dir_)) out.push_back(e.path().filename());
    std::sort(out.begin(), out.end());
    return out;
  }

  std::string dir_;
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
  auto r = ReadFileBounded(dir_, 1024);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().Text(), "\"" + dir_ + "\" is not a regular file");
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
