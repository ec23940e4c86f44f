// The disk cache of compiled kernels (engine/runtime/disk_cache.h) in one process: SHA-256, entries read back as written,
// every damaged entry (each prefix, each single flipped bit, garbage, another key's, another format's) a miss, the bound
// kept by removing the least recently used, a folder that cannot be written an error string and a count (never an
// exception), threads sharing one cache; and the CPU JIT's object cache (engine/runtime/cpu/install.h): a kernel linked
// from its kept object computes what the compiled one did, a damaged object entry is compiled again and rewritten.
#include <fcntl.h>
#include <sys/stat.h>
#include <utime.h>

#include <QtTest/QtTest>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "engine/runtime/compiler_hook.h"
#include "engine/runtime/cpu/cpu_jit.h"
#include "engine/runtime/cpu/install.h"
#include "engine/runtime/disk_cache.h"
#include "engine/uop/sha256.h"

namespace fs = std::filesystem;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}
void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}
// the names of the files in `dir` whose names end in `ext`
std::set<std::string> names(const std::string& dir, const std::string& ext) {
  std::set<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec))
    if (it->path().extension() == ext) out.insert(it->path().filename().string());
  return out;
}
// sets a file's access time (what marks an entry as used) to `seconds` after the epoch, keeping its write time
void set_used(const std::string& path, time_t seconds) {
  struct stat st;
  QVERIFY(::stat(path.c_str(), &st) == 0);
  const timespec times[2] = {{seconds, 0}, st.st_mtim};
  QVERIFY(::utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
}
timespec used_at(const std::string& path) {
  struct stat st;
  ::stat(path.c_str(), &st);
  return st.st_atim;
}

constexpr const char* kMagic = "TSTST01\n";

// a C kernel a[i] = b[i] * k + 1 over 16 floats
std::string scale_kernel(float k) {
  return "void scale(float* restrict a, const float* restrict b) { for (int i = 0; i < 16; i++) a[i] = b[i] * " +
         std::to_string(k) + "f + 1.0f; }\n";
}
using ScaleFn = void (*)(float*, const float*);

}  // namespace

class TestDiskCache : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  std::string dir(const char* name) const { return (fs::path(tmp_.path().toStdString()) / name).string(); }

 private slots:
  void sha256_known_digests() {
    QCOMPARE(ts::to_hex(ts::sha256("")), std::string("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
    QCOMPARE(ts::to_hex(ts::sha256("abc")), std::string("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
    QCOMPARE(ts::to_hex(ts::sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
             std::string("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
    const std::string million(1000000, 'a');
    ts::Sha256 pieces;  // fed in uneven pieces: the same digest as at once
    for (size_t at = 0; at < million.size(); at += 999) pieces.update(std::string_view(million).substr(at, 999));
    QCOMPARE(ts::to_hex(pieces.digest()), std::string("cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
    QCOMPARE(ts::to_hex(ts::sha256("abc"), 4), std::string("ba7816bf"));
  }

  void entry_reads_back_as_written() {
    ts::DiskCache c(dir("plain"), ".e", kMagic, "the test entry");
    QVERIFY(!c.get("key one"));
    QCOMPARE(c.put("key one", std::string("payload\0with a zero", 19)), std::string());
    QCOMPARE(c.put("key two", ""), std::string());
    QCOMPARE(*c.get("key one"), std::string("payload\0with a zero", 19));
    QCOMPARE(*c.get("key two"), std::string());
    QVERIFY(!c.get("key three"));
    QCOMPARE(names(c.dir(), ".e").size(), size_t(2));
    const std::string file = c.path_of("key one");
    QVERIFY(file.ends_with(".e"));
    QCOMPARE(fs::path(file).filename().string().size(), size_t(32 + 2));  // 128 bits of SHA-256 in hex
    QVERIFY(read_file(file).starts_with(kMagic));
    // another cache of the same folder (another process) reads it; another format's magic does not
    ts::DiskCache again(c.dir(), ".e", kMagic, "the test entry");
    QCOMPARE(*again.get("key one"), std::string("payload\0with a zero", 19));
    ts::DiskCache newer(c.dir(), ".e", "TSTST02\n", "the test entry");
    QVERIFY(!newer.get("key one"));
    const ts::DiskCacheStats s = c.stats();
    QCOMPARE(s.writes, uint64_t(2));
    QCOMPARE(s.hits, uint64_t(2));
    QCOMPARE(s.misses, uint64_t(2));
    QCOMPARE(s.rejected, uint64_t(0));
  }

  // every way an entry can be damaged is a miss: each cut, each single bit flipped anywhere, garbage of the same size,
  // bytes after its end, an empty file, another key's entry under this key's name
  void damaged_entries_are_misses() {
    ts::DiskCache c(dir("damaged"), ".e", kMagic, "the test entry");
    const std::string key = "the key text", payload = "object code \x01\x02\x03 of a kernel";
    QCOMPARE(c.put(key, payload), std::string());
    const std::string file = c.path_of(key), good = read_file(file);
    QCOMPARE(good.size(), size_t(8 + 8 + key.size() + 8 + payload.size() + 32));
    int misses = 0;
    for (size_t n = 0; n < good.size(); ++n) {
      write_file(file, good.substr(0, n));
      misses += !c.get(key);
    }
    QCOMPARE(misses, int(good.size()));
    misses = 0;
    for (size_t bit = 0; bit < good.size() * 8; ++bit) {
      std::string bad = good;
      bad[bit / 8] = static_cast<char>(bad[bit / 8] ^ (1 << (bit % 8)));
      write_file(file, bad);
      misses += !c.get(key);
    }
    QCOMPARE(misses, int(good.size() * 8));
    write_file(file, std::string(good.size(), 'x'));
    QVERIFY(!c.get(key));
    write_file(file, good + "extra");
    QVERIFY(!c.get(key));
    write_file(file, "");
    QVERIFY(!c.get(key));
    // a whole, valid entry of another key where this key's file is (a hash collision): not this key's
    QCOMPARE(c.put("another key", payload), std::string());
    write_file(file, read_file(c.path_of("another key")));
    QVERIFY(!c.get(key));
    QCOMPARE(c.stats().rejected, c.stats().misses);
    // written again, it is read again
    QCOMPARE(c.put(key, payload), std::string());
    QCOMPARE(read_file(file), good);
    QCOMPARE(*c.get(key), payload);
  }

  // past the bound, the entries used least recently go first (a hit counts as a use), until the rest fill 90% of it
  void bound_removes_the_least_recently_used() {
    const std::string payload(1000, 'p');
    const uint64_t entry = 8 + 8 + 5 + 8 + 1000 + 32;  // keys "key N"
    ts::DiskCache c(dir("bounded"), ".e", kMagic, "the test entry", 10 * entry);
    for (int i = 0; i < 10; ++i) QCOMPARE(c.put("key " + std::to_string(i), payload), std::string());
    QCOMPARE(names(c.dir(), ".e").size(), size_t(10));  // exactly at the bound: nothing removed
    // entry i used at time 1000 + i, except entry 0 and entry 3: used last (a hit sets its access time to now)
    for (int i = 0; i < 10; ++i) set_used(c.path_of("key " + std::to_string(i)), 1000 + i);
    const timespec before = used_at(c.path_of("key 0"));
    QVERIFY(c.get("key 0"));
    QVERIFY(c.get("key 3"));
    QVERIFY(used_at(c.path_of("key 0")).tv_sec > before.tv_sec);
    // a file that is no entry of this cache is left alone
    write_file(c.dir() + "/notes.txt", std::string(50000, 'n'));
    // the 11th entry: 11 entries over the bound of 10; down to 9 (90%): keys 1 and 2 go (the oldest uses)
    QCOMPARE(c.put("key A", payload), std::string());
    std::set<std::string> left = names(c.dir(), ".e");
    QCOMPARE(left.size(), size_t(9));
    for (const char* gone : {"key 1", "key 2"}) QVERIFY2(!fs::exists(c.path_of(gone)), gone);
    for (const char* kept : {"key 0", "key 3", "key 4", "key 9", "key A"}) QVERIFY2(fs::exists(c.path_of(kept)), kept);
    QCOMPARE(c.stats().evicted, uint64_t(2));
    QVERIFY(fs::exists(c.dir() + "/notes.txt"));
    // an entry larger than the whole bound is not kept, and costs the others nothing
    QCOMPARE(c.put("key huge", std::string(20 * entry, 'h')), std::string());
    QVERIFY(!fs::exists(c.path_of("key huge")));
    QCOMPARE(names(c.dir(), ".e"), left);
    uint64_t total = 0;
    for (const std::string& n : names(c.dir(), ".e")) total += fs::file_size(c.dir() + "/" + n);
    QVERIFY(total <= 10 * entry);
  }

  // another process's entries count too: a cache over the bound when first written to is brought under it
  void bound_counts_entries_written_before() {
    const std::string payload(1000, 'q');
    const std::string d = dir("before");
    {
      ts::DiskCache big(d, ".e", kMagic, "the test entry", 1 << 20);
      for (int i = 0; i < 20; ++i) QCOMPARE(big.put("key " + std::to_string(i), payload), std::string());
      for (int i = 0; i < 20; ++i) set_used(big.path_of("key " + std::to_string(i)), 5000 + i);
    }
    QCOMPARE(names(d, ".e").size(), size_t(20));
    ts::DiskCache small(d, ".e", kMagic, "the test entry", 10 * 1100);
    QCOMPARE(small.put("key new", payload), std::string());
    const std::set<std::string> left = names(d, ".e");
    QVERIFY2(left.size() <= 9, std::to_string(left.size()).c_str());
    QVERIFY(fs::exists(small.path_of("key new")));
    QVERIFY(fs::exists(small.path_of("key 19")));
    QVERIFY(!fs::exists(small.path_of("key 0")));
  }

  // a temporary file a killed writer left long ago is removed when the folder is counted; a recent one is not
  void stale_temporaries_are_removed() {
    const std::string d = dir("stale");
    ts::DiskCache c(d, ".e", kMagic, "the test entry");
    QCOMPARE(c.put("k", "v"), std::string());
    const std::string old_tmp = c.path_of("old") + ".tmp.999999.0", new_tmp = c.path_of("new") + ".tmp.999999.1";
    write_file(old_tmp, "half");
    write_file(new_tmp, "half");
    const utimbuf old_times{std::time(nullptr) - 7200, std::time(nullptr) - 7200};
    QVERIFY(::utime(old_tmp.c_str(), &old_times) == 0);
    ts::DiskCache fresh(d, ".e", kMagic, "the test entry");  // a new process: counts the folder at its first write
    QCOMPARE(fresh.put("k2", "v"), std::string());
    QVERIFY(!fs::exists(old_tmp));
    QVERIFY(fs::exists(new_tmp));
  }

  // a folder that cannot be made (a regular file is in the way): put says why and counts it, get misses
  void unwritable_folder_is_an_error_string() {
    write_file(dir("a-file"), "x");
    ts::DiskCache c(dir("a-file") + "/cache", ".e", kMagic, "the test entry");
    const uint64_t before = ts::disk_cache_write_errors();
    const std::string why = c.put("k", "v");
    QVERIFY2(why.find("cannot create the cache directory") != std::string::npos, why.c_str());
    QVERIFY2(why.find("Not a directory") != std::string::npos, why.c_str());
    QVERIFY(!c.get("k"));
    std::string last;
    QCOMPARE(ts::disk_cache_write_errors(&last), before + 1);
    QCOMPARE(last, why);
    QCOMPARE(c.stats().write_errors, uint64_t(1));
  }

  // threads writing and reading the same keys at once: every read is a miss or the whole payload
  void threads_share_one_cache() {
    ts::DiskCache c(dir("threads"), ".e", kMagic, "the test entry");
    std::atomic<int> wrong{0}, hits{0};
    std::vector<std::thread> ts;
    for (int t = 0; t < 4; ++t)
      ts.emplace_back([&, t] {
        for (int i = 0; i < 200; ++i) {
          const std::string key = "key " + std::to_string(i % 16), payload(100 + i % 16, static_cast<char>('a' + i % 16));
          if (auto got = c.get(key)) {
            hits++;
            if (*got != payload) wrong++;
          }
          if ((i + t) % 3 == 0 && !c.put(key, payload).empty()) wrong++;
        }
      });
    for (auto& t : ts) t.join();
    QCOMPARE(wrong.load(), 0);
    QVERIFY(hits.load() > 0);
    QCOMPARE(names(c.dir(), ".e").size(), size_t(16));
    for (const auto& e : fs::directory_iterator(c.dir())) QVERIFY(e.path().string().find(".tmp.") == std::string::npos);
  }

  // the JIT's object cache: a kernel compiled once is linked from its object in a later install (a new process's), with
  // the same results; a damaged object entry is compiled again and rewritten as it was
  void cpu_objects_are_kept_and_linked() {
    const std::string root = dir("cpu"), objects = root + "/cpu";
    const float in[16] = {0, 1, -2, 3.5f, 1e-8f, 7, 8, 9, 10, 11, 12, 13, 14, 15, -1e30f, 0.1f};
    auto run = [&](const char* lang, const std::string& src) {
      std::vector<float> out(16);
      auto fn = reinterpret_cast<ScaleFn>(ts::compiler_hook()(lang, src, "scale"));
      fn(out.data(), in);
      return out;
    };
    ts::cpu::install(root);
    const std::string src = scale_kernel(3.25f);
    const std::vector<float> first = run("c", src);
    QCOMPARE(first[1], 4.25f);
    QCOMPARE(names(objects, ".o").size(), size_t(1));
    const std::string file = objects + "/" + *names(objects, ".o").begin(), good = read_file(file);
    QVERIFY(good.starts_with("TSOBJ01\n"));
    QVERIFY2(good.find(ts::cpu::object_key()) != std::string::npos, "the entry holds its whole key");
    QVERIFY(good.find(src) != std::string::npos);
    QVERIFY(good.find("\x7f" "ELF") != std::string::npos);
    const auto written = fs::last_write_time(file);

    ts::cpu::install(root);  // as a new process: nothing in memory
    QCOMPARE(run("c", src), first);
    QCOMPARE(fs::last_write_time(file), written);  // linked from the entry, not compiled and written again
    QCOMPARE(names(objects, ".o").size(), size_t(1));

    // a flipped bit in the object code: compiled again, rewritten whole
    std::string bad = good;
    bad[good.size() - 100] = static_cast<char>(bad[good.size() - 100] ^ 0x04);
    write_file(file, bad);
    ts::cpu::install(root);
    QCOMPARE(run("c", src), first);
    QCOMPARE(read_file(file), good);
    // a cut entry, then garbage: the same
    write_file(file, good.substr(0, good.size() / 2));
    ts::cpu::install(root);
    QCOMPARE(run("c", src), first);
    QCOMPARE(read_file(file), good);
    write_file(file, std::string(good.size(), '\x90'));
    ts::cpu::install(root);
    QCOMPARE(run("c", src), first);
    QCOMPARE(read_file(file), good);

    // another constant: another entry, another result
    const std::vector<float> other = run("c", scale_kernel(2.0f));
    QCOMPARE(other[1], 3.0f);
    QCOMPARE(names(objects, ".o").size(), size_t(2));
    ts::cpu::install();  // no folder: nothing kept
    QCOMPARE(run("c", scale_kernel(5.0f))[1], 6.0f);
    QCOMPARE(names(objects, ".o").size(), size_t(2));
  }

  // object code made once links in many JITDylibs (each load its own), and a symbol the object lacks is an error
  void objects_link_again() {
    const std::string obj = ts::cpu::compile_object(ts::cpu::SourceKind::C, scale_kernel(1.5f));
    for (int i = 0; i < 3; ++i) {
      auto fn = reinterpret_cast<ScaleFn>(ts::cpu::load_object(obj, "scale"));
      float in[16] = {2}, out[16] = {};
      fn(out, in);
      QCOMPARE(out[0], 4.0f);
    }
    bool threw = false;
    try {
      ts::cpu::load_object(obj, "no_such_kernel");
    } catch (const std::exception& e) {
      threw = std::string(e.what()).find("no_such_kernel") != std::string::npos;
    }
    QVERIFY(threw);
  }
};

QTEST_GUILESS_MAIN(TestDiskCache)
#include "test_disk_cache.moc"
