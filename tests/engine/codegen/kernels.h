#pragma once
// Kernel ASTs built by hand, as the scheduler hands them to codegen (see engine/codegen/program.h).
#include "engine/uop/uop.h"

namespace k {
using namespace ts;
inline UOpRef param(int slot, int64_t size, DType dt = dtypes::float32) {
  ParamArg pa; pa.slot = slot; pa.size = size; pa.device = "CPU";
  return UOp::make(Ops::PARAM, dt, {}, pa);
}
inline UOpRef idx(const UOpRef& p, const UOpRef& i) { return UOp::make(Ops::INDEX, p->dtype, {p, i}); }
inline UOpRef store(const UOpRef& p, const UOpRef& i, const UOpRef& v) { return UOp::make(Ops::STORE, dtypes::void_, {idx(p, i), v}); }
inline UOpRef end(const UOpRef& s, UOps rs) { UOps src{s}; src.insert(src.end(), rs.begin(), rs.end()); return UOp::make(Ops::END, dtypes::void_, src); }
inline UOpRef reduce(Ops op, const UOpRef& v, UOps rs) { UOps src{v}; src.insert(src.end(), rs.begin(), rs.end()); return UOp::make(Ops::REDUCE, v->dtype, src, ReduceArg{op, 0}); }
inline UOpRef sink(const UOpRef& x) { return UOp::make(Ops::SINK, dtypes::void_, {x}, KernelInfo{}); }
inline UOpRef R(int64_t n, int64_t id, AxisType t = AxisType::WEAK) { return urange(n, id, t); }
inline UOpRef c(int64_t v) { return iconst(v); }

// out[r0] = a[r0] + b[r0], 4
inline UOpRef seed_add() {
  auto o = param(0, 4), a = param(1, 4), b = param(2, 4);
  auto r0 = R(4, 0);
  return sink(end(store(o, r0, alu(Ops::ADD, idx(a, r0), idx(b, r0))), {r0}));
}
// out[r0] = sum_r1 x[r0*3+r1]
inline UOpRef row_sum_2x3() {
  auto o = param(0, 2), x = param(1, 6);
  auto r0 = R(2, 0), r1 = R(3, 1, AxisType::REDUCE);
  return sink(end(store(o, r0, reduce(Ops::ADD, idx(x, iadd(imul(r0, c(3)), r1)), {r1})), {r0}));
}
// out[r0] = sum_r1 x[r1*3+r0]  (axis 0 of 2x3)
inline UOpRef col_sum_2x3() {
  auto o = param(0, 3), x = param(1, 6);
  auto r0 = R(3, 0), r1 = R(2, 1, AxisType::REDUCE);
  return sink(end(store(o, r0, reduce(Ops::ADD, idx(x, iadd(imul(r1, c(3)), r0)), {r1})), {r0}));
}
// out[0] = sum x[r0*3+r1]
inline UOpRef full_sum_2x3() {
  auto o = param(0, 1), x = param(1, 6);
  auto r0 = R(2, 0, AxisType::REDUCE), r1 = R(3, 1, AxisType::REDUCE);
  return sink(store(o, c(0), reduce(Ops::ADD, idx(x, iadd(imul(r0, c(3)), r1)), {r0, r1})));
}
// out[r0] = sum_r1 x[r0*N+r1]  (rows of an R x N matrix)
inline UOpRef row_sum(int64_t rows, int64_t n) {
  auto o = param(0, rows), x = param(1, rows * n);
  auto r0 = R(rows, 0), r1 = R(n, 1, AxisType::REDUCE);
  return sink(end(store(o, r0, reduce(Ops::ADD, idx(x, iadd(imul(r0, c(n)), r1)), {r1})), {r0}));
}
// out[r0] = max_r1 x[r0*N+r1]
inline UOpRef row_max(int64_t rows, int64_t n) {
  auto o = param(0, rows), x = param(1, rows * n);
  auto r0 = R(rows, 0), r1 = R(n, 1, AxisType::REDUCE);
  return sink(end(store(o, r0, reduce(Ops::MAX, idx(x, iadd(imul(r0, c(n)), r1)), {r1})), {r0}));
}
// out[r0] = sum_r1 exp2((x[r0*N+r1] - m[r0]) * 0.0144)  (a softmax's sum of exps, its inputs scaled down)
inline UOpRef row_sum_exp(int64_t rows, int64_t n) {
  auto o = param(0, rows), x = param(1, rows * n), m = param(2, rows);
  auto r0 = R(rows, 0), r1 = R(n, 1, AxisType::REDUCE);
  auto d = alu(Ops::ADD, idx(x, iadd(imul(r0, c(n)), r1)), alu(Ops::NEG, idx(m, r0)));
  auto e = alu(Ops::EXP2, alu(Ops::MUL, d, uconst(dtypes::float32, 0.0144)));
  return sink(end(store(o, r0, reduce(Ops::ADD, e, {r1})), {r0}));
}
// out[r0*N+r1] = sum_r2 a[r0*K+r2]*b[r2*N+r1]
inline UOpRef matmul(int64_t M, int64_t K, int64_t N) {
  auto o = param(0, M * N), a = param(1, M * K), b = param(2, K * N);
  auto r0 = R(M, 0), r1 = R(N, 1), r2 = R(K, 2, AxisType::REDUCE);
  auto v = alu(Ops::MUL, idx(a, iadd(imul(r0, c(K)), r2)), idx(b, iadd(imul(r2, c(N)), r1)));
  return sink(end(store(o, iadd(imul(r0, c(N)), r1), reduce(Ops::ADD, v, {r2})), {r0, r1}));
}
// out[co][y][x] = sum_{ci,ky,kx} x[ci][y+ky][x+kx] * w[co][ci][ky][kx]  (a 3x3 conv2d without padding, H x W in)
inline UOpRef conv2d_3x3(int64_t CO, int64_t CI, int64_t H, int64_t W) {
  const int64_t OH = H - 2, OW = W - 2;
  auto o = param(0, CO * OH * OW), x = param(1, CI * H * W), w = param(2, CO * CI * 9);
  auto co = R(CO, 0), y = R(OH, 1), xx = R(OW, 2);
  auto ci = R(CI, 3, AxisType::REDUCE), ky = R(3, 4, AxisType::REDUCE), kx = R(3, 5, AxisType::REDUCE);
  auto in = idx(x, iadd(iadd(imul(ci, c(H * W)), imul(iadd(y, ky), c(W))), iadd(xx, kx)));
  auto wt = idx(w, iadd(iadd(imul(co, c(CI * 9)), imul(ci, c(9))), iadd(imul(ky, c(3)), kx)));
  auto out = iadd(iadd(imul(co, c(OH * OW)), imul(y, c(OW))), xx);
  return sink(end(store(o, out, reduce(Ops::ADD, alu(Ops::MUL, in, wt), {ci, ky, kx})), {co, y, xx}));
}
// out[r0*2+r1] = x[r1*3+r0]  (3x2 transposed copy of 2x3)
inline UOpRef transpose_3x2() {
  auto o = param(0, 6), x = param(1, 6);
  auto r0 = R(3, 0), r1 = R(2, 1);
  return sink(end(store(o, iadd(imul(r0, c(2)), r1), idx(x, iadd(imul(r1, c(3)), r0))), {r0, r1}));
}
// out[r0] = max_r1 x[r0*4+r1]  (softmax max, 3x4)
inline UOpRef row_max_3x4() {
  auto o = param(0, 3), x = param(1, 12);
  auto r0 = R(3, 0), r1 = R(4, 1, AxisType::REDUCE);
  return sink(end(store(o, r0, reduce(Ops::MAX, idx(x, iadd(imul(r0, c(4)), r1)), {r1})), {r0}));
}
// out[r0*4+r1] = exp2((x - m[r0]) * log2e) * (1/s[r0])
inline UOpRef softmax_final_3x4() {
  auto o = param(0, 12), x = param(1, 12), m = param(2, 3), s = param(3, 3);
  auto r0 = R(3, 0), r1 = R(4, 1);
  auto i = iadd(imul(r0, c(4)), r1);
  auto e = alu(Ops::EXP2, alu(Ops::MUL, alu(Ops::ADD, idx(x, i), alu(Ops::NEG, idx(m, r0))), uconst(dtypes::float32, 1.4426950408889634)));
  return sink(end(store(o, i, alu(Ops::MUL, e, alu(Ops::RECIPROCAL, idx(s, r0)))), {r0, r1}));
}
// out[r0] = where(g[r0], a[r0], b[r0]) over 5
inline UOpRef where_5() {
  auto o = param(0, 5), g = param(1, 5, dtypes::bool_), a = param(2, 5), b = param(3, 5);
  auto r0 = R(5, 0);
  return sink(end(store(o, r0, alu(Ops::WHERE, idx(g, r0), idx(a, r0), idx(b, r0))), {r0}));
}
// out[r0] = a[r0] < b[r0] (bool) over 5
inline UOpRef cmp_5() {
  auto o = param(0, 5, dtypes::bool_), a = param(1, 5), b = param(2, 5);
  auto r0 = R(5, 0);
  return sink(end(store(o, r0, alu(Ops::CMPLT, idx(a, r0), idx(b, r0))), {r0}));
}
// sum of 65536 split: out[r0] = sum_r1 x[r0*256+r1] over 256x256
inline UOpRef split_sum_256() {
  auto o = param(0, 256), x = param(1, 65536);
  auto r0 = R(256, 0), r1 = R(256, 1, AxisType::REDUCE);
  return sink(end(store(o, r0, reduce(Ops::ADD, idx(x, iadd(imul(r0, c(256)), r1)), {r1})), {r0}));
}
// arange % 3 as float over 65536
inline UOpRef arange_mod3() {
  auto o = param(0, 65536);
  auto r0 = R(65536, 0);
  return sink(end(store(o, r0, ucast(alu(Ops::FLOORMOD, r0, c(3)), dtypes::float32)), {r0}));
}
// 2x4 elementwise: out[r0*4+r1] = a*b+a
inline UOpRef ew_2x4() {
  auto o = param(0, 8), a = param(1, 8), b = param(2, 8);
  auto r0 = R(2, 0), r1 = R(4, 1);
  auto i = iadd(imul(r0, c(4)), r1);
  return sink(end(store(o, i, alu(Ops::ADD, alu(Ops::MUL, idx(a, i), idx(b, i)), idx(a, i))), {r0, r1}));
}
// out[0] = sum_{r0 < n} x[r0], n a Variable in [1, 10]
inline UOpRef var_sum() {
  auto o = param(0, 1), x = param(1, 10);
  ParamArg pa; pa.slot = -1; pa.name = "n"; pa.vmin = 1; pa.vmax = 10; pa.addrspace = AddrSpace::ALU;
  auto n = UOp::make(Ops::PARAM, dtypes::weakint, {}, pa);
  auto r0 = UOp::make(Ops::RANGE, dtypes::weakint, {n}, RangeArg{0, AxisType::REDUCE});
  return sink(store(o, c(0), reduce(Ops::ADD, idx(x, r0), {r0})));
}
// out[r0] = sqrt(x[r0]) + (x[r0] // 2 as int) - x[r0]%3 (ints mixed in) over 6, gated read of x[r0-1] for r0 >= 1
inline UOpRef mixed_6() {
  auto o = param(0, 6), x = param(1, 6);
  auto r0 = R(6, 0);
  auto xi = idx(x, r0);
  auto asint = ucast(xi, dtypes::int32);
  auto fl = alu(Ops::FLOORDIV, asint, uconst_int(dtypes::int32, -2));
  auto md = alu(Ops::FLOORMOD, asint, uconst_int(dtypes::int32, 3));
  auto prev = alu(Ops::WHERE, alu(Ops::CMPLT, c(0), r0), idx(x, iadd(r0, c(-1))), uconst(dtypes::float32, 0));
  auto v = alu(Ops::ADD, alu(Ops::SQRT, alu(Ops::MAX, xi, uconst(dtypes::float32, 0))), ucast(alu(Ops::ADD, fl, md), dtypes::float32));
  return sink(end(store(o, r0, alu(Ops::ADD, v, prev)), {r0}));
}
// out[r0] = sum_r1 (x[r0*3+r1]*2) + 1 over 4x3 (corpus 10)
inline UOpRef scaled_row_sum_4x3() {
  auto o = param(0, 4), x = param(1, 12);
  auto r0 = R(4, 0), r1 = R(3, 1, AxisType::REDUCE);
  auto v = alu(Ops::MUL, idx(x, iadd(imul(r0, c(3)), r1)), uconst(dtypes::weakfloat, 2.0));
  return sink(end(store(o, r0, alu(Ops::ADD, reduce(Ops::ADD, v, {r1}), uconst(dtypes::weakfloat, 1.0))), {r0}));
}
// out[r0] = !(a[r0] != b[r0]) over 5 (how the front end spells ==)
inline UOpRef eq_5() {
  auto o = param(0, 5, dtypes::bool_), a = param(1, 5), b = param(2, 5);
  auto r0 = R(5, 0);
  return sink(end(store(o, r0, alu(Ops::CMPNE, alu(Ops::CMPNE, idx(a, r0), idx(b, r0)), uconst_bool(true))), {r0}));
}
}  // namespace k
