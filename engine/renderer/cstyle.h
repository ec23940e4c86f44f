#pragma once
// The C-style renderer base (the reference's CStyleLanguage): one walk over a linearized program that names values
// (valN, aluN, castN, accN), inlines single-use expressions, opens and closes loops, and renders the C semantics the
// program's comment block in program.h demands (wrapping ints, defined division by zero and shifts, guarded
// float -> int). A language is a set of hooks: how it spells types, casts, constants and builtins, how a buffer
// access looks, its signature and prologue, special indices, barriers and local memory. C (c_renderer.cpp) and GLSL
// (glsl_renderer.cpp) are its instances.
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/codegen/program.h"
#include "engine/uop/error.h"

namespace ts {

class CStyleLanguage {
 public:
  virtual ~CStyleLanguage() = default;
  // the source, and when `lines` is given which UOp each body line renders (ProgramSpec::source_lines)
  std::string render(const ProgramSpec& spec, SourceLines* lines = nullptr) const;

  // ---- spelling
  virtual std::string name() const = 0;                     // "C renderer", for errors
  virtual std::string type(DType dt) const = 0;             // a scalar type
  virtual std::string unsigned_type(int bits) const = 0;    // the unsigned integer of a width
  // a cast as an operand of a larger expression, without outer parentheses: C "(int)(x)", GLSL "int(x)"
  virtual std::string cast_bare(const std::string& type, const std::string& x) const = 0;
  std::string cast(const std::string& type, const std::string& x) const { return std::string("(").append(cast_bare(type, x)).append(")"); }
  virtual std::string render_const(const UOp& c) const = 0;
  // an integer CONST in the C spellings both languages share (suffixes l, ul, u; a cast for 8/16-bit dtypes)
  std::string int_literal(const UOp& c) const;
  virtual std::string float_literal(const std::string& digits, DType dt) const = 0;  // "2147483648.0" of float/double
  virtual std::string builtin(Ops op, DType dt, const std::vector<std::string>& s, const UOp& u) const = 0;  // EXP2 SQRT ...
  virtual std::string bitcast(const UOp& u, const std::string& x) const = 0;
  // an op on bool operands, or "" for the generic rendering (C: only AND/OR/XOR, its int arithmetic on _Bool is right)
  virtual std::string bool_op(Ops op, const std::vector<std::string>& s) const;
  // whether the rendering of u names an operand more than once (those operands then get a variable of their own);
  // the C rules are the base's: guarded int division and shifts, float -> int casts
  virtual bool repeats_operands(const UOp& u) const;
  // the literal 1 of a float dtype, as RECIPROCAL's numerator (C computes half in float: "1.0f")
  virtual std::string one(DType dt) const { return dt == dtypes::float64 ? "1.0" : "1.0f"; }
  // a < b of operands of dtype dt (CMPLT)
  virtual std::string less_than(DType dt, const std::string& a, const std::string& b) const { return "(" + a + "<" + b + ")"; }
  // whether C's integer promotion applies (narrow ints and half computed wider: results are cast back)
  virtual bool promotes_narrow() const { return true; }

  // ---- memory
  // the access expression of INDEX(buf, idx): C "(data0_4+idx)" (a pointer), GLSL "data0_4[idx]" (an lvalue)
  virtual std::string index(const std::string& buf, const std::string& idx, bool idx_is_add, DType idx_dtype) const = 0;
  virtual std::string deref(const std::string& access) const = 0;  // the value at an access
  // a loaded value of a buffer of dtype dt, and a value to store into one (GLSL keeps bool as uint8_t)
  virtual std::string load_value(DType dt, const std::string& v) const { return v; }
  virtual std::string store_value(DType dt, const std::string& v) const { return v; }
  // whether arithmetic in a WHERE's arm gets a variable of its own rather than being inlined into the select
  virtual bool where_arms_as_variables() const { return false; }
  // the spellings of the CPU passes' vector accesses (engine/codegen/cpu/linear_passes.h: VLOAD, VSTORE): the vector type
  // of w floats, a load of the w floats at buf[idx..idx+w-1] (idx a multiple of w, written as a sum), a store of
  // lanes.size() values there
  virtual std::string vec_type(int w) const { return std::string("float").append(std::to_string(w)); }
  virtual std::string vec_load(const std::string& buf, const std::string& idx, int w) const {
    return "(*((" + vec_type(w) + "*)((" + buf + "+" + idx + "))))";
  }
  virtual std::string vec_store(const std::string& buf, const std::string& idx, const std::vector<std::string>& lanes) const {
    std::string v;
    for (const auto& l : lanes) v += (v.empty() ? "" : ",") + l;
    const std::string t = vec_type(static_cast<int>(lanes.size()));
    return "*((" + t + "*)((" + buf + "+" + idx + "))) = (" + t + "){" + v + "};";
  }

  // ---- structure
  virtual std::string special(const UOp& u) const;  // gidx/lidx: an error unless the language has them
  virtual std::string barrier() const;
  // local memory: a declaration of `size` elements of dt named nm; returned for the prologue (or a body line)
  virtual std::string local_decl(DType dt, const std::string& nm, int64_t size) const;
  // an array of the program's own (a copied panel: AddrSpace::REG), declared where the program starts
  virtual std::string array_decl(DType dt, const std::string& nm, int64_t size) const;
  // a PREFETCH: a hint that the cache line at the address `addr` (a pointer expression) is read soon
  virtual std::string prefetch(const std::string&) const { throw Error(name() + ": a PREFETCH in the program"); }
  // the whole source around the body lines (one source line each, in order); *body_line: the 1-based line of the first
  struct Param {
    const UOp* uop;
    std::string name;
  };
  virtual std::string wrap(const ProgramSpec& spec, const std::vector<Param>& params, const std::vector<std::string>& body,
                           const std::vector<std::string>& prologue, const std::set<int>& vec_widths_used, int* body_line) const = 0;

  // ---- the shared C semantics (used by the hooks' callers; built from the spellings above)
  std::string render_alu(Ops op, DType dt, const std::vector<std::string>& s, const UOp& u) const;
  virtual std::string render_cast(const UOp& u, const std::string& x) const;
  std::string to_dtype(const UOp& u, std::string expr) const;

 private:
  std::string render_int_divmod(Ops op, DType dt, const std::vector<std::string>& s, const UOp& u) const;
  std::string render_shift(Ops op, DType dt, const std::vector<std::string>& s, const UOp& u) const;
  std::string render_float_to_int(DType from, DType to, const std::string& x) const;
};

// s without one pair of parentheses around all of it ("(a+b)" -> "a+b"; "(a)+(b)" stays)
std::string strip_parens(const std::string& s);
// C spelling of a float constant's digits (python repr, then float32 rounding for non-double dtypes)
std::string float_digits(double v, DType dt);

}  // namespace ts
