#pragma once
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

}  // namespace tsv
