// ts_fuzz: runs the random-program fuzzer (fuzz.h) over FUZZ_COUNT seeds from FUZZ_SEED.
//
//   FUZZ_SEED=1 FUZZ_COUNT=10000 build/tests/ts_fuzz      (what `make fuzz` runs)
//   FUZZ_TIMEOUT=60      seconds one program may take before it counts as a hang
//   FUZZ_CHUNK=150       programs per worker process (compiled kernels and call records do not pile up)
//   FUZZ_LOG=FILE        also write every failing program there
//   FUZZ_VALIDATION=0    without the Vulkan validation layer (on by default: a message fails the program)
//
// The supervisor starts worker processes (ts_fuzz --worker FIRST COUNT); a worker prints one line per program.
// A worker that crashes or hangs is reported as a failure of the program it was running (its seed and source),
// and the next worker goes on from the seed after it. Prints progress, each failure with its seed and tinygrad
// source, and a summary; exits 1 when any program failed.
#include <QtCore/QCoreApplication>
#include <QtCore/QElapsedTimer>
#include <QtCore/QFile>
#include <QtCore/QProcess>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "fuzz.h"

namespace {

long env_long(const char* name, long fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  long x = std::strtol(v, &end, 10);
  if (*end) {
    std::fprintf(stderr, "ts_fuzz: %s must be an integer, got '%s'\n", name, v);
    std::exit(2);
  }
  return x;
}

// worker: one line per program ("RUN seed", then "OK seed" or "FAIL seed" + the report + "END")
int worker(uint32_t first, uint32_t count) {
  ts::fuzz::init();
  for (uint32_t s = first; s < first + count; ++s) {
    std::printf("RUN %u\n", s);
    std::fflush(stdout);
    ts::fuzz::Outcome o = ts::fuzz::run_program(s);
    if (o.ok) std::printf("OK %u\n", s);
    else std::printf("FAIL %u\n%s\nEND\n", s, o.what.c_str());
    std::fflush(stdout);
  }
  return 0;
}

struct Summary {
  long programs = 0, failures = 0, explained = 0;
  std::string log;
  // seeds whose difference has a stated cause: fuzz_explained.txt (SEED DEVICE  # cause) and
  // vulkan_known_failures.txt (SEED  # cause, VULKAN only)
  std::map<std::pair<long, std::string>, std::string> causes;
};

void read_explained(Summary& sum) {
  for (auto [file, fixed_dev] : {std::pair<const char*, const char*>{"fuzz_explained.txt", nullptr}, {"vulkan_known_failures.txt", "VULKAN"}}) {
    QFile f(QStringLiteral(TS_SOURCE_DIR "/tests/engine/differential/") + file);
    if (!f.open(QIODevice::ReadOnly | QIODevice::Text)) continue;
    for (const QString& raw : QString::fromUtf8(f.readAll()).split('\n')) {
      const QStringList w = raw.section('#', 0, 0).split(' ', Qt::SkipEmptyParts);
      if (w.isEmpty()) continue;
      const std::string dev = fixed_dev ? fixed_dev : w.value(1).toStdString();
      sum.causes[{w[0].toLong(), dev}] = raw.section('#', 1).trimmed().toStdString();
    }
  }
}

void report(Summary& sum, const std::string& text) {
  // "seed S: DEVICE ..." of a listed seed and device: explained, not a failure
  long seed = -1;
  char dev[64] = {0};
  if (std::sscanf(text.c_str(), "seed %ld: %63s", &seed, dev) == 2)
    if (auto c = sum.causes.find({seed, dev}); c != sum.causes.end()) {
      ++sum.explained;
      std::printf("explained: seed %ld on %s: %s\n", seed, dev, c->second.c_str());
      std::fflush(stdout);
      return;
    }
  ++sum.failures;
  std::printf("\n==== FAILURE %ld\n%s\n", sum.failures, text.c_str());
  std::fflush(stdout);
  sum.log += text + "\n\n";
}

// the tinygrad source of a seed, for a program whose worker died
std::string source_of(uint32_t seed) {
  QProcess p;
  p.start(QCoreApplication::applicationFilePath(), {"--source", QString::number(seed)});
  p.waitForFinished(60000);
  return p.readAllStandardOutput().toStdString();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--worker") return worker(std::stoul(argv[2]), std::stoul(argv[3]));
  if (argc == 4 && std::string(argv[1]) == "--python-defs") {  // the programs as python functions (fuzz_variants.py)
    ts::fuzz::init();
    ts::fuzz::use_device("INTERP");
    const uint32_t a = static_cast<uint32_t>(std::stoul(argv[2])), n = static_cast<uint32_t>(std::stoul(argv[3]));
    for (uint32_t s = a; s < a + n; ++s) std::printf("%s", ts::fuzz::build(s).python_def.c_str());
    return 0;
  }
  if (argc == 3 && std::string(argv[1]) == "--source") {
    ts::fuzz::init();
    std::printf("%s", ts::fuzz::build(static_cast<uint32_t>(std::stoul(argv[2]))).source.c_str());
    return 0;
  }
  QCoreApplication app(argc, argv);
  const uint32_t first = static_cast<uint32_t>(env_long("FUZZ_SEED", 1));
  const long count = env_long("FUZZ_COUNT", 10000);
  const long timeout_ms = env_long("FUZZ_TIMEOUT", 60) * 1000;
  const long chunk = std::max(1L, env_long("FUZZ_CHUNK", 150));
  std::printf("ts_fuzz: %ld programs from seed %u (timeout %ld s per program, %ld per worker)\n", count, first, timeout_ms / 1000, chunk);
  std::fflush(stdout);

  Summary sum;
  read_explained(sum);
  QElapsedTimer total;
  total.start();
  uint32_t next = first;
  const uint32_t end = first + static_cast<uint32_t>(count);
  while (next < end) {
    uint32_t n = static_cast<uint32_t>(std::min<long>(chunk, end - next)), chunk_first = next;
    QProcess w;
    w.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    w.start(QCoreApplication::applicationFilePath(), {"--worker", QString::number(next), QString::number(n)});
    if (!w.waitForStarted(30000)) {
      std::fprintf(stderr, "ts_fuzz: cannot start a worker\n");
      return 2;
    }
    std::string buf, failure;
    bool in_failure = false;
    long running = -1;
    QElapsedTimer since;
    since.start();
    bool hung = false;
    for (;;) {
      bool more = w.waitForReadyRead(1000);
      buf += w.readAllStandardOutput().toStdString();
      size_t nl;
      while ((nl = buf.find('\n')) != std::string::npos) {
        std::string line = buf.substr(0, nl);
        buf.erase(0, nl + 1);
        if (in_failure) {
          if (line == "END") {
            in_failure = false;
            report(sum, failure);
            failure.clear();
          } else {
            failure += line + "\n";
          }
        } else if (line.rfind("RUN ", 0) == 0) {
          running = std::stol(line.substr(4));
          since.restart();
        } else if (line.rfind("OK ", 0) == 0 || line.rfind("FAIL ", 0) == 0) {
          ++sum.programs;
          next = static_cast<uint32_t>(std::stol(line.substr(line.find(' ') + 1))) + 1;
          running = -1;
          in_failure = line[0] == 'F';
          if (sum.programs % 250 == 0) {
            std::printf("ts_fuzz: %ld/%ld programs, %ld failures, %.0f s\n", sum.programs, count, sum.failures, total.elapsed() / 1000.0);
            std::fflush(stdout);
          }
        }
      }
      if (!more && w.state() == QProcess::NotRunning) break;
      if (running >= 0 && since.elapsed() > timeout_ms) {
        hung = true;
        w.kill();
        w.waitForFinished(10000);
        break;
      }
    }
    if (running >= 0) {  // the worker died (or hung) while running a program
      ++sum.programs;
      std::string why = hung ? "hangs (over " + std::to_string(timeout_ms / 1000) + " s)"
                             : "crashes the process (exit " + std::to_string(w.exitCode()) + ", " +
                                   (w.exitStatus() == QProcess::CrashExit ? "signal" : "normal exit") + ")";
      report(sum, "seed " + std::to_string(running) + ": " + why + "\n--- program (seed " + std::to_string(running) + ") ---\n" +
                      source_of(static_cast<uint32_t>(running)));
      next = static_cast<uint32_t>(running) + 1;
    } else if (next < end && next == chunk_first) {
      std::fprintf(stderr, "ts_fuzz: a worker exited before its first program (seed %u)\n", next);
      return 2;
    }
  }
  if (const char* log = std::getenv("FUZZ_LOG"); log && *log) {
    QFile f(log);
    if (f.open(QIODevice::WriteOnly)) f.write(sum.log.c_str());
  }
  std::printf("ts_fuzz: %ld programs (seeds %u..%u), %ld failures, %ld explained differences, %.1f s\n", sum.programs, first, end - 1,
              sum.failures, sum.explained, total.elapsed() / 1000.0);
  return sum.failures ? 1 : 0;
}
