// The access model (viewer/model/access_model.h) against the interpreter: the examples' programs (a matmul, a conv2d
// with and without padding, each followed by relu and a sum as resources/examples/conv2d.py, softmax's three kernels)
// run on INTERP with provenance recorded (engine/runtime/interp/provenance.h) under NOOPT, the default opts and BEAM=2,
// and on INTERP:GPU (locals; group reduces through LOCAL memory) under the default opts and BEAM=2. For every kernel,
// the elements the model says it writes are the ones the interpreter stored, and for every output element the elements
// of each buffer the model says it reads are the ones the interpreter's stored value was computed from. Model and
// interpreter meet in one process: the trace the model reads holds the opts of the very programs the interpreter ran
// (BEAM's choice included).
#include <QtTest>

#include <algorithm>
#include <functional>
#include <iterator>
#include <set>
#include <nlohmann/json.hpp>

#include "engine/codegen/opt.h"
#include "engine/realize/realize.h"
#include "engine/runtime/interp/provenance.h"
#include "engine/tensor/tensor.h"
#include "engine/trace/trace.h"
#include "viewer/model/access_model.h"
#include "viewer/model/session.h"

using namespace ts;

namespace {

HostData host(const Shape& shape, const std::function<double(int64_t)>& f) {
  HostData h;
  h.shape = shape;
  h.dtype = dtypes::float32;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  for (int64_t k = 0; k < n; ++k) h.f.push_back(f(k));
  return h;
}

// the examples' programs at small sizes, their data as the scripts make it: the tensors to realize together
std::vector<Tensor> program(const QString& name) {
  if (name == "matmul") {
    // resources/examples/matmul.py at 16x24 @ 24x8
    Tensor a = Tensor::from_host(host({16, 24}, [](int64_t k) { return double(k % 7 - 3); }));
    Tensor b = Tensor::from_host(host({24, 8}, [](int64_t k) { return double(k % 5 - 2); }));
    return {a.matmul(b)};
  }
  if (name.startsWith("conv2d")) {
    // resources/examples/conv2d.py: a 3x3 conv over a 1x2x8x8 image, 4 output channels, relu, summed (the conv
    // realized too: alone, the sum would take it into its own kernel)
    Tensor x = Tensor::from_host(host({1, 2, 8, 8}, [](int64_t k) { return double(k % 5); }));
    Tensor w = Tensor::from_host(host({4, 2, 3, 3}, [](int64_t k) {
      const int64_t o = k / 18, c = k / 9 % 2, i = k / 3 % 3, j = k % 3;
      return double(((o + c + i - j) % 3 + 3) % 3 - 1);
    }));
    const int64_t pad = name == "conv2d padding=1" ? 1 : 0;
    Tensor y = x.conv2d(w, std::nullopt, 1, {1}, {1}, {pad}).relu();
    return {y, y.sum()};
  }
  // resources/examples/softmax.py
  const std::vector<double> t = {1, 2, 3, 4, 1, 1, 1, 1, -1, 0, 1, 100};
  return {Tensor::from_host(host({3, 4}, [&](int64_t k) { return t[size_t(k)]; })).softmax(-1)};
}

using Elements = std::set<std::pair<int, qint64>>;  // (buffer slot, element)

QString show(const Elements& e) {
  QStringList out;
  for (const auto& [slot, i] : e) out << QString("buf%1[%2]").arg(slot).arg(i);
  if (out.size() > 24) out = out.mid(0, 24) << QString("... (%1 in all)").arg(e.size());
  return "{" + out.join(", ") + "}";
}
// what `a` holds and `b` does not
Elements minus(const Elements& a, const Elements& b) {
  Elements out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::inserter(out, out.end()));
  return out;
}
// the model's and the interpreter's sets, each with what only it holds
QString differ(const QString& model_does, const Elements& model, const QString& interp_did, const Elements& interp) {
  return QString("the model %1 %2 elements, the interpreter %3 %4; only the model: %5; only the interpreter: %6")
      .arg(model_does)
      .arg(model.size())
      .arg(interp_did)
      .arg(interp.size())
      .arg(show(minus(model, interp)), show(minus(interp, model)));
}

// the kernel context of `program_key` recorded at or after context `first` (a program of the same AST compiled under
// other opts earlier in this process has the same key), or -1
int kernel_context_from(const tsv::Session& s, const QString& program_key, int first) {
  for (int c = int(s.contexts().size()) - 1; c >= first; --c)
    if (s.contexts()[c].has_program && s.contexts()[c].program.program_key == program_key) return c;
  return -1;
}

}  // namespace

class TestAccessInterp : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    RealizeConfig config;
    config.device = "INTERP";
    config.beam_lines = false;  // (no BEAM line on stderr per kernel; nothing kept on disk: no beam_cache_dir)
    install_realize(config);
    // the entry point's part: the CPU threads the test environment sets (THREAD opts under the default heuristics)
    if (qEnvironmentVariableIsSet("NUM_CPU_THREADS")) codegen_options()["NUM_CPU_THREADS"] = qgetenv("NUM_CPU_THREADS").toStdString();
    trace::set_level(trace::Level::Passes);  // (the access model reads the expander pass's input)
  }

  void model_equals_interpreter_data() {
    QTest::addColumn<QString>("script");
    QTest::addColumn<QString>("device");
    QTest::addColumn<QString>("env");
    const QList<QPair<QString, QString>> runs = {{"INTERP", "NOOPT=1"}, {"INTERP", ""}, {"INTERP", "BEAM=2"}, {"INTERP:GPU", ""}, {"INTERP:GPU", "BEAM=2"}};
    for (const auto& [device, env] : runs)
      for (const char* script : {"matmul", "conv2d", "conv2d padding=1", "softmax"})
        QTest::newRow(qPrintable(QString("%1 %2 %3").arg(script, device, env).trimmed())) << script << device << env;
  }
  void model_equals_interpreter() {
    QFETCH(QString, script);
    QFETCH(QString, device);
    QFETCH(QString, env);
    realize_config().device = device.toStdString();
    codegen_options()["NOOPT"] = env == "NOOPT=1" ? "1" : "";
    realize_config().beam = env == "BEAM=2" ? 2 : 0;
    const nlohmann::json before = trace::to_json();
    const int first_context = int(before[trace::key::kContexts].size()), first_call = int(before[trace::key::kCalls].size());
    // compiled first (BEAM's timed candidates are interpreted launches too), then run with provenance recorded
    const auto linear = schedule_linear(program(script));
    compile_schedule(*linear);
    take_provenance();
    record_provenance(true);
    run_linear(*linear);
    record_provenance(false);
    const std::vector<Provenance> launches = take_provenance();
    codegen_options()["NOOPT"] = "";
    realize_config().beam = 0;

    tsv::Session s;
    QString err;
    QVERIFY2(s.load_data(QByteArray::fromStdString(trace::to_json().dump()), &err), qPrintable(err));
    QList<int> kernels;
    for (int i = first_call; i < s.calls().size(); ++i)
      if (s.calls()[i].kind == "kernel") kernels << i;
    QCOMPARE(qsizetype(launches.size()), kernels.size());
    QVERIFY(!kernels.isEmpty());
    qint64 checked = 0;
    for (int k = 0; k < kernels.size(); ++k) {
      const tsv::Call& call = s.calls()[kernels[k]];
      const Provenance& launch = launches[size_t(k)];
      QCOMPARE(QString::fromStdString(launch.kernel), call.name);
      const int context = kernel_context_from(s, call.program_key, first_context);
      QVERIFY2(context >= 0, qPrintable(call.name));
      const QString what =
          QString("%1 on %2 (%3, opts [%4])").arg(call.name, device, env.isEmpty() ? "default" : env, s.contexts()[context].program.applied_opts.join(", "));
      tsv::AccessModel m;
      QVERIFY2(m.load(s, context, kernels[k], &err), qPrintable(err));
      // what the model writes: every point's stored elements
      Elements model_writes;
      m.for_each_point([&](const QList<qint64>& p) {
        const QList<qint64> e = m.at(p);
        for (int a = 0; a < m.accesses().size(); ++a)
          if (m.accesses()[a].write && e[a] >= 0) model_writes.insert({m.accesses()[a].slot, e[a]});
      });
      Elements stored;
      for (const auto& [element, deps] : launch.stores) stored.insert({element.slot, element.index});
      QVERIFY2(model_writes == stored, qPrintable(what + ": " + differ("writes", model_writes, "stored", stored)));
      for (const auto& [element, deps] : launch.stores) {
        Elements model_reads, interp_reads;
        const auto reads = m.reads_of_output(element.slot, element.index);
        for (auto it = reads.begin(); it != reads.end(); ++it)
          for (qint64 i : it.value()) model_reads.insert({it.key(), i});
        for (const ElementRef& r : deps) interp_reads.insert({r.slot, r.index});
        QVERIFY2(model_reads == interp_reads, qPrintable(QString("%1, output buf%2[%3]: ").arg(what).arg(element.slot).arg(element.index) +
                                                         differ("reads", model_reads, "computed it from", interp_reads)));
        ++checked;
      }
    }
    QVERIFY(checked > 0);
  }
};

QTEST_GUILESS_MAIN(TestAccessInterp)
#include "test_access_interp.moc"
