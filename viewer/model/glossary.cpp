#include "viewer/model/glossary.h"

#include <QRegularExpression>

#include "viewer/model/ansi.h"

namespace tsv {

namespace {
// lessons: 1 tour, 2 lazy graph, 3 realize, 4 kernel split, 5 schedule, 6 codegen, 7 TinyJit, 8 devices
const QList<GlossaryEntry> kEntries = {
    // ---- ops: the Tensor graph
    {"ADD", "op", "elementwise sum of its two sources", 2},
    {"AFTER", "op", "its first source, once the effects listed after it (stores, other kernels) have happened", 4},
    {"ASSIGN", "op", "writes a value into an existing buffer (Tensor.assign); later reads see the new value", 3},
    {"BITCAST", "op", "the same bits read as another dtype", 6},
    {"BUFFER", "op", "memory on a device: a realized tensor's storage, or a kernel's local/register array", 2},
    {"CALL", "op", "a kernel (or copy) of the schedule: the computation it runs and the buffers it reads and writes", 4},
    {"CAST", "op", "converts each element to another dtype (value-preserving where it can)", 2},
    {"CMPLT", "op", "elementwise a < b, a bool", 2},
    {"CMPNE", "op", "elementwise a != b, a bool", 2},
    {"CMPEQ", "op", "elementwise a == b, a bool", 2},
    {"CONST", "op", "a constant; broadcast to a shape by the movement ops above it", 2},
    {"CONTIGUOUS", "op", "asks for this value to be stored in its own buffer in row-major order: a kernel boundary", 4},
    {"COPY", "op", "moves a buffer between devices (host to device, or device to device)", 2},
    {"DEFINE_ACC", "op", "a kernel's accumulator register, initialised before its reduce loop", 6},
    {"DETACH", "op", "the same value, cut from the gradient graph", 2},
    {"END", "op", "closes the loops (RANGEs) a store runs in", 6},
    {"EXP2", "op", "elementwise 2^x; exp(x) is EXP2(x * log2(e))", 2},
    {"EXPAND", "op", "movement: repeats size-1 axes to a larger shape, no copy", 2},
    {"FDIV", "op", "elementwise float division", 2},
    {"FLIP", "op", "movement: reverses axes, no copy", 2},
    {"GEP", "op", "one lane of a vector value", 6},
    {"GROUP", "op", "several effects (stores) treated as one", 6},
    {"INDEX", "op", "the address of one element of a buffer: the buffer and an index expression over the loops", 6},
    {"LINEAR", "op", "an ordered list: the schedule's calls, or a kernel's instructions after linearization", 5},
    {"LOAD", "op", "reads one element (or a vector) at an INDEX", 6},
    {"LOG2", "op", "elementwise log2(x)", 2},
    {"MAX", "op", "elementwise maximum of its two sources", 2},
    {"MUL", "op", "elementwise product of its two sources", 2},
    {"MULACC", "op", "a*b+c in one op (a fused multiply-add where the device has one)", 6},
    {"NEG", "op", "elementwise negation", 2},
    {"PAD", "op", "movement: adds zeros around axes (a gated read in the kernel)", 2},
    {"PARAM", "op", "a kernel's argument: a buffer it reads or writes, or a variable (the CPU's core id)", 6},
    {"PERMUTE", "op", "movement: reorders axes, no copy", 2},
    {"RANGE", "op", "a loop over one axis of the kernel; its type says what it is (global, local, reduce, upcast, unroll)", 6},
    {"RECIPROCAL", "op", "elementwise 1/x", 2},
    {"REDUCE", "op", "a reduction (sum, max) over the ranges it closes, inside a kernel", 4},
    {"REDUCE_AXIS", "op", "sums (or maxes) a tensor over axes: the op that splits a graph into kernels", 4},
    {"RESHAPE", "op", "movement: a new shape over the same elements, no copy", 2},
    {"SHL", "op", "elementwise shift left", 6},
    {"SHR", "op", "elementwise shift right", 6},
    {"SHRINK", "op", "movement: a slice of each axis, no copy", 2},
    {"SIN", "op", "elementwise sine", 2},
    {"SINK", "op", "the root that holds everything to compute: a kernel's stores, or a schedule's outputs", 4},
    {"SPECIAL", "op", "a GPU launch index (gidx: work group, lidx: lane in the work group)", 8},
    {"SQRT", "op", "elementwise square root", 2},
    {"STAGE", "op", "marks a value the kernel split must store in a buffer of its own", 4},
    {"STORE", "op", "writes a value at an INDEX: a kernel's output", 5},
    {"SUB", "op", "elementwise difference", 2},
    {"TRANSPOSED_ACC", "op", "the CPU's scheme: 16 rows' accumulations done 16 lanes at a time on transposed loads", 6},
    {"VACC_UPDATE", "op", "the CPU's scheme: a vector of accumulators updated by scalar-times-vector products", 6},
    {"VLOAD", "op", "the CPU's scheme: adjacent loads as one vector load", 6},
    {"VSTORE", "op", "the CPU's scheme: adjacent stores as one vector store", 6},
    {"DEFINE_VACC", "op", "the CPU's scheme: a vector of accumulators", 6},
    {"PREFETCH", "op", "the CPU's scheme: a hint that an address is read soon", 6},
    {"WHERE", "op", "elementwise select: c ? a : b", 2},
    {"WMMA", "op", "a tensor-core matrix multiply-add of a subgroup", 8},
    {"XOR", "op", "elementwise exclusive or", 6},
    {"AND", "op", "elementwise and", 6},
    {"OR", "op", "elementwise or", 6},
    // ---- passes
    {"add gpudims", "pass", "turns the outermost ranges into the GPU's launch indexes (gidx, lidx)", 8},
    {"add implicit barriers", "pass", "puts a barrier between writes to local memory and the reads of them", 8},
    {"apply rangeify", "pass", "gives every op the loops (ranges) it runs in: the step that decides what fuses", 4},
    {"callify", "pass", "wraps what a realize computes into calls the scheduler can split", 3},
    {"decomp dtypes", "pass", "dtypes the device lacks computed in one it has (bfloat16 in float32, ...)", 8},
    {"earliest rewrites", "pass", "the first cleanups of the Tensor graph before rangeify", 4},
    {"early decompositions", "pass", "ops the device lacks rewritten into ones it has, before lowering", 6},
    {"early symbolic", "pass", "algebraic simplification of the kernel's expressions", 6},
    {"expander", "pass", "unrolls UPCAST and UNROLL ranges into separate lanes", 6},
    {"final rewrite", "pass", "the kernel's last rewrites before linearization", 6},
    {"final symbolic", "pass", "a last algebraic simplification after lowering", 6},
    {"flatten range", "pass", "merges nested loops into one where the indexes allow", 6},
    {"get realize", "pass", "the tensors a realize must store", 3},
    {"initial symbolic", "pass", "algebraic simplification of the kernel before its opts", 6},
    {"kernel inputs", "pass", "the buffers a kernel reads become its PARAMs", 4},
    {"late decompositions", "pass", "ops the renderer lacks rewritten last (bit tricks, float64 polynomials)", 6},
    {"limit buffers", "pass", "splits kernels that would bind more buffers than the device allows", 4},
    {"load collapse", "pass", "folds a reduce over a one-hot selection into a single load (an arange's gather)", 4},
    {"lower all index dtypes", "pass", "index arithmetic in int32 where it fits, int64 where it does not", 6},
    {"lower masks", "pass", "padding's validity conditions become gated loads", 6},
    {"number params with -1", "pass", "numbers a kernel's parameters in the order the call passes them", 4},
    {"order calls", "pass", "orders the calls so each runs after those that write what it reads: the LINEAR", 5},
    {"postopt symbolic", "pass", "algebraic simplification after the opts changed the loops", 6},
    {"prefetch the next block", "pass", "the CPU's scheme: asks for the next block of a strided read ahead of time", 6},
    {"remove reduces", "pass", "a REDUCE becomes an accumulator, a loop and its update", 6},
    {"simplify ranges", "pass", "merges and removes loops of size one", 6},
    {"split kernels", "pass", "cuts the graph into kernels at the stored values", 4},
    {"split ranges", "pass", "splits a range where a modulo makes two loops simpler", 6},
    {"stage to store", "pass", "each value that must live in memory becomes a STORE to a new buffer", 4},
    {"symbolic+reduce_collapse+debuf", "pass", "simplification that also collapses reduces and removes needless buffers", 4},
    {"transcendental decompositions", "pass", "exp2, log2 and sin as the reference's polynomials where the device's are slow or imprecise", 6},
    {"transposed accumulation", "pass", "the CPU's scheme: 16 accumulations of 4-wide loads as one transposed vector accumulation", 6},
    {"vector accumulators", "pass", "the CPU's scheme: scalar accumulators taking the lanes of the same loads as one vector", 6},
    {"vector loads of grouped lanes", "pass", "adjacent loads and stores of a buffer as one vector access", 6},
    {"linearize", "pass", "orders the kernel's instructions into a program (a LINEAR)", 6},
    {"jam loop", "pass", "the CPU's scheme: 2 or 4 iterations of an output loop run together (more independent accumulators)", 6},
    {"copy into a panel", "pass", "the CPU's scheme: a strided read copied once into a contiguous stack array, then read from there", 6},
    {"reorder for the panel", "pass", "the CPU's scheme: the loops over outputs reordered so a panel is reused", 6},
    {"expand broadcast / add loads", "pass", "each read of an INDEX becomes a LOAD of it (the reference's name for it starts with ***)", 6},
    // ---- opts
    {"UPCAST", "opt", "unrolls an output axis by N into registers: each thread computes N outputs", 6},
    {"UNROLL", "opt", "unrolls a reduce axis by N: N products added per loop step", 6},
    {"LOCAL", "opt", "moves N of an axis into the work group (GPU lanes that share local memory)", 8},
    {"GROUP", "opt", "splits a reduce across the lanes of a work group, partial sums combined in local memory", 8},
    {"GROUPTOP", "opt", "as GROUP, taking the outer part of the reduce axis", 8},
    {"THREAD", "opt", "splits an axis over the CPU's cores", 6},
    {"TC", "opt", "maps the matmul onto the device's tensor cores (cooperative matrices)", 8},
    {"PADTO", "opt", "pads an axis to a multiple of N so other opts fit", 6},
    {"NOLOCALS", "opt", "keeps the kernel off local memory", 8},
    {"SWAP", "opt", "swaps two global axes", 8},
    // ---- kernel names
    {"E_", "name", "an elementwise kernel; the numbers are its loop sizes, coloured by kind (global, local, upcast)", 3},
    {"r_", "name", "a reduce kernel; the numbers are its loop sizes, coloured by kind (reduce, unroll, upcast, ...)", 3},
};
}  // namespace

const QList<GlossaryEntry>& glossary() {
  static const QList<GlossaryEntry> sorted = [] {
    QList<GlossaryEntry> e = kEntries;
    auto rank = [](const QString& k) { return k == "op" ? 0 : k == "pass" ? 1 : k == "opt" ? 2 : 3; };
    std::stable_sort(e.begin(), e.end(), [&](const GlossaryEntry& a, const GlossaryEntry& b) {
      return rank(a.kind) != rank(b.kind) ? rank(a.kind) < rank(b.kind) : a.term.compare(b.term, Qt::CaseInsensitive) < 0;
    });
    return e;
  }();
  return sorted;
}

QString opt_op(const QString& opt) {
  static const QRegularExpression kOp(QStringLiteral("OptOps\\.([A-Z_]+)"));
  const auto m = kOp.match(opt);
  return m.hasMatch() ? m.captured(1) : opt;
}

const GlossaryEntry* glossary_lookup(const QString& word) {
  static const QRegularExpression kShift(QStringLiteral("^shift \\(.*\\) -?\\d+ ([a-z_]+)$"));
  QString w = strip_ansi(word).trimmed();
  if (const QString op = opt_op(w); op != w) w = op;
  else if (const auto s = kShift.match(w); s.hasMatch()) w = s.captured(1).toUpper();  // an opt's pass: its opt
  else if (w.startsWith(QStringLiteral("Ops."))) w = w.mid(4);
  else if (w.startsWith(QStringLiteral("*** "))) w = w.mid(4);
  // the CPU's schemes' passes carry their counts in their names ("jam loop 1 into the reduce: 4 iterations at a time")
  else if (w.startsWith(QStringLiteral("jam loop "))) w = QStringLiteral("jam loop");
  else if (w.startsWith(QStringLiteral("copy ")) && w.contains(QStringLiteral("into a panel"))) w = QStringLiteral("copy into a panel");
  else if (w.startsWith(QStringLiteral("loops over outputs reordered for the panel"))) w = QStringLiteral("reorder for the panel");
  else if (w.startsWith(QStringLiteral("E_")) || w.startsWith(QStringLiteral("r_"))) w = w.left(2);
  for (const GlossaryEntry& e : glossary())
    if (e.term == w) return &e;
  return nullptr;
}

QString glossary_text(const QString& word) {
  const GlossaryEntry* e = glossary_lookup(word);
  if (!e) return {};
  QString t = QStringLiteral("%1 (%2): %3").arg(e->term, e->kind, e->meaning);
  if (e->lesson > 0) t += QStringLiteral(" — Help > Lessons > %1").arg(e->lesson);
  return t;
}

QString glossary_html() {
  QString h = QStringLiteral("<table cellspacing=4>");
  QString kind;
  for (const GlossaryEntry& e : glossary()) {
    if (e.kind != kind) {
      kind = e.kind;
      const QString title = kind == "op" ? QStringLiteral("Ops") : kind == "pass" ? QStringLiteral("Passes") : kind == "opt" ? QStringLiteral("Opts") : QStringLiteral("Kernel names");
      h += QStringLiteral("<tr><td colspan=3><b>%1</b></td></tr>").arg(title);
    }
    h += QStringLiteral("<tr><td><tt>%1</tt></td><td>%2</td><td>%3</td></tr>")
             .arg(e.term.toHtmlEscaped(), e.meaning.toHtmlEscaped(), e.lesson > 0 ? QStringLiteral("lesson %1").arg(e.lesson) : QString());
  }
  return h + QStringLiteral("</table>");
}

}  // namespace tsv
