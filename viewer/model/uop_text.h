#pragma once
#include <QList>
#include <QString>
#include <functional>

namespace tsv {
struct Uop;

// A UOp subtree as the engine's Python binding prints it (app/python/bind_uop.cpp, after the reference's UOp repr):
//   UOp(Ops.ADD, dtypes.float, arg=None, src=(
//     UOp(Ops.CONST, dtypes.float, arg=1.0, src=()),
//     x0,
//   ))
// one node a line, each source indented two spaces; a node used more than once is printed once as x<N>:=UOp(...) and
// then named x<N>; past max_lines lines one "..." stands for the rest (the open nodes' closing lines follow it). `node` reads the nodes (nullptr: unknown, "?").
QString uop_repr(int root, const std::function<const Uop*(int)>& node, int max_lines = 400);
// A LINEAR node's program, one uop a line in order, each by its node id ("  57 VLOAD        dtypes.float     [1, 47]
// (4, 0, 0)": id, op, dtype, its sources' ids, argument): ids stay with unchanged uops from one pass's program to the
// next, so a diff of two listings shows just the uops a linear pass added, dropped or rebuilt.
QString linear_program(int linear, const std::function<const Uop*(int)>& node);

}  // namespace tsv

namespace tsv {
class Session;
// A kernel's linearized program as a list, one uop a line as the reference's print_uops and tinyscope's INTERP print
// it ("   5 RANGE        dtypes.int       [2] (1, AxisType.WEAK)": its position, op, dtype, the positions of its
// sources, its argument): the sources of the last LINEAR a pass of the kernel context made (what the renderer
// rendered). Empty when the context has none (an older trace, a context that is not a kernel's).
QString linear_listing(const Session& s, int kernel_context);
// the uops of that LINEAR in order (empty: none)
QList<int> linear_uops(const Session& s, int kernel_context);
}  // namespace tsv
