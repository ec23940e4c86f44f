# devices: CPU INTERP VULKAN
# bad programs raise the reference's exception class (code that catches the reference's exceptions catches ours; the
# messages are ours): each line is what `except CLASS` caught, recorded from the reference
# (creation, movement, indexing, reductions, convolutions, dtypes, nn, optimizers, gradients, assign, TinyJit)
from tinygrad import Tensor, TinyJit, Device, dtypes, nn
from tinygrad.engine.jit import JitError
def nonscalar_backward():
  t = Tensor.ones(3)
  t.requires_grad = True
  t.mul(2).backward()


def param(n):
  t = Tensor.ones(n).contiguous()
  t.requires_grad = True
  return t
def backward_with_gradient_of_another_shape():
  t = param(3)
  (t * 2).backward(Tensor.ones(4))
def gradient_of_a_non_scalar():
  t = param(3)
  return (t * 2).gradient(t)
def optimizer_step_without_grad():
  t = param(3)
  opt = nn.optim.SGD([t], lr=0.1)
  Tensor.training = True
  try: opt.step()
  finally: Tensor.training = False
def assign(dst, src):
  t = dst.realize()
  t.assign(src)
  return t
def jit_twice(f, *args_list):
  j = TinyJit(f)
  out = None
  for args in args_list: out = j(*args)
  return out
def jit_duplicate_inputs():
  a = Tensor.ones(3).contiguous().realize()
  return jit_twice(lambda x, y: (x + y).realize(), (a, a), (a, a), (a, a))
def jit_other_shapes():
  return jit_twice(lambda x: (x * 2).realize(), (Tensor.ones(3).contiguous().realize(),), (Tensor.ones(3).contiguous().realize(),),
                   (Tensor.ones(4).contiguous().realize(),))
def jit_non_tensor_return():
  return jit_twice(lambda x: [(x * 2).realize(), 3], *[(Tensor.ones(3).contiguous().realize(),)] * 3)
def jit_nothing():
  return jit_twice(lambda x: None, *[(Tensor.ones(3).contiguous().realize(),)] * 3)
def jit_nested():
  inner = TinyJit(lambda x: (x * 2).realize())
  return jit_twice(lambda x: inner(x) + 1, *[(Tensor.ones(3).contiguous().realize(),)] * 3)
def backward_twice():
  t = param(3)
  y = (t * t).sum()
  y.backward()
  y.backward()
  return t.grad
def dropout_train(p):
  Tensor.training = True
  try: return Tensor.ones(3).dropout(p)
  finally: Tensor.training = False
def setitem(t, idx, v):
  t = t.contiguous().realize()
  t[idx] = v
  return t
def len_of(t): return len(t)
def iter_of(t): return list(t)

cases = [
  ("to() of a python scalar's weak dtype", lambda: Tensor([True, False]).where(0, 1).to("CPU" if Device.DEFAULT == "CPU:1" else "CPU:1").tolist(), RuntimeError),
  ("broadcast (2,3) + (4,3)", lambda: Tensor.ones(2, 3) + Tensor.ones(4, 3), IndexError),
  ("where with shapes that do not broadcast", lambda: Tensor.ones(2, 3).where(Tensor.ones(4), Tensor.ones(5)), RuntimeError),
  ("matmul (2,3) @ (4,5)", lambda: Tensor.ones(2, 3) @ Tensor.ones(4, 5), RuntimeError),
  ("matmul with a 0-d tensor", lambda: Tensor.ones(3) @ Tensor(2.0), RuntimeError),
  ("dot of lengths 3 and 4", lambda: Tensor.ones(3).dot(Tensor.ones(4)), RuntimeError),
  ("reshape 6 elements to (4,2)", lambda: Tensor.ones(2, 3).reshape(4, 2), ValueError),
  ("reshape with two -1", lambda: Tensor.ones(2, 3).reshape(-1, -1), RuntimeError),
  ("view with two -1", lambda: Tensor.ones(2, 3).view(-1, -1), RuntimeError),
  ("permute (0,0)", lambda: Tensor.ones(2, 3).permute(0, 0), RuntimeError),
  ("permute of too few dims", lambda: Tensor.ones(2, 3).permute(0), RuntimeError),
  ("sum over axis 5 of a 2-d tensor", lambda: Tensor.ones(2, 3).sum(axis=5), IndexError),
  ("max over axis 3", lambda: Tensor.ones(2, 3).max(axis=3), IndexError),
  ("softmax over axis 4", lambda: Tensor.ones(2, 3).softmax(axis=4), IndexError),
  ("transpose (0,7)", lambda: Tensor.ones(2, 3).transpose(0, 7), IndexError),
  ("flatten from dim 5", lambda: Tensor.ones(2, 3).flatten(5), IndexError),
  ("squeeze dim 4", lambda: Tensor.ones(2, 3).squeeze(4), IndexError),
  ("unsqueeze dim 7", lambda: Tensor.ones(2, 3).unsqueeze(7), IndexError),
  ("gather along dim 3", lambda: Tensor.ones(2, 3).gather(3, Tensor([[0]])), IndexError),
  ("cat of (2,3) and (2,4) on dim 0", lambda: Tensor.ones(2, 3).cat(Tensor.ones(2, 4), dim=0), AssertionError),
  ("cat on dim 4", lambda: Tensor.ones(2, 3).cat(Tensor.ones(2, 3), dim=4), IndexError),
  ("stack of (2,) and (3,)", lambda: Tensor.stack(Tensor.ones(2), Tensor.ones(3)), AssertionError),
  ("shrink past the end", lambda: Tensor.ones(2, 3).shrink(((0, 3), (0, 3))), ValueError),
  ("expand (2,3) to (4,3)", lambda: Tensor.ones(2, 3).expand(4, 3), ValueError),
  ("pad of one dim of a 2-d tensor", lambda: Tensor.ones(2, 3).pad(((0, 1),)), ValueError),
  ("repeat with too few repeats", lambda: Tensor.ones(2, 3).repeat(2), ValueError),
  ("index 5 of a dim of 2", lambda: Tensor.ones(2, 3)[5], IndexError),
  ("three indices into a 2-d tensor", lambda: Tensor.ones(2, 3)[0, 0, 0], IndexError),
  ("split into sizes that do not sum to the dim", lambda: Tensor.ones(4).split([1, 1]), AssertionError),
  ("chunk into 0 chunks", lambda: Tensor.ones(4).chunk(0), AssertionError),
  ("conv2d with 2 weight channels for 3 input channels", lambda: Tensor.ones(1, 3, 5, 5).conv2d(Tensor.ones(4, 2, 3, 3)), AssertionError),
  ("arange with step 0", lambda: Tensor.arange(0, 10, 0), ZeroDivisionError),
  ("full with a negative dim", lambda: Tensor.full((2, -3), 1.0), ValueError),
  ("rand with a negative dim", lambda: Tensor.rand(-2), ValueError),
  ("an unknown dtype name", lambda: Tensor.ones(2, dtype="nosuchdtype"), AttributeError),
  ("item of 3 elements", lambda: Tensor.ones(3).item(), AssertionError),
  ("backward of a non-scalar", lambda: nonscalar_backward(), AssertionError),
  ("requires_grad= to Tensor() (not a parameter)", lambda: Tensor([1.0, 2.0], requires_grad=True), TypeError),
  ("a Tensor of a str", lambda: Tensor("abc"), RuntimeError),
  ("~ of floats", lambda: ~Tensor([1.0]), RuntimeError),
  ("a str exponent", lambda: Tensor([2]).pow("x"), RuntimeError),
  ("avg_pool2d with a kernel larger than the input", lambda: Tensor.ones(1, 1, 2, 2).avg_pool2d(kernel_size=(5, 5)), AssertionError),
  ("expand to a negative size", lambda: Tensor.ones(2, 1).expand(2, -3), ValueError),
  ("a ragged list", lambda: Tensor([[1, 2], [3]]), ValueError),
  ("topk of more than there are", lambda: Tensor.ones(3).topk(5), ValueError),
  ("cumsum over axis 2 of a 1-d tensor", lambda: Tensor.ones(3).cumsum(axis=2), IndexError),
  ("einsum of mismatched dims", lambda: Tensor.einsum("ij,jk->ik", Tensor.ones(2, 3), Tensor.ones(4, 5)), RuntimeError),
  ("where on a float condition", lambda: Tensor([1.0]).where(Tensor([1]), Tensor([2])), RuntimeError),
  ("arange to infinity", lambda: Tensor.arange(0, float("inf")), ValueError),
  ("gather with an index larger than the tensor off its dim", lambda: Tensor.ones(2, 3).gather(1, Tensor([[0, 1], [1, 0], [0, 0]])), AssertionError),
  ("full of nan as int32", lambda: Tensor.full((2,), float("nan"), dtype=dtypes.int32), ValueError),
  ("sum over axis (0, 0)", lambda: Tensor([1.0, 2.0]).sum(axis=(0, 0)), RuntimeError),
  ("float & float", lambda: Tensor([1.0, 2.0]) & Tensor([1.0, 2.0]), RuntimeError),
  # creation
  ("a Tensor of a dict", lambda: Tensor({1: 2}), RuntimeError),
  ("a Tensor of an object", lambda: Tensor(object()), RuntimeError),
  ("a Tensor of a list of str", lambda: Tensor(["a", "b"]), RuntimeError),
  ("a Tensor of a list with a None", lambda: Tensor([1.0, None]), RuntimeError),
  ("a Tensor with an unknown dtype name", lambda: Tensor([1, 2], dtype="nosuchdtype"), AttributeError),
  ("a list ragged one level down", lambda: Tensor([[1, 2], [3, 4], [5]]), ValueError),
  ("a list mixing scalars and lists", lambda: Tensor([1, [2, 3]]), ValueError),
  ("ones with a negative dim", lambda: Tensor.ones(-4), ValueError),
  ("empty with a negative dim", lambda: Tensor.empty(3, -2), ValueError),
  ("full with a str fill value", lambda: Tensor.full((2,), "x"), RuntimeError),
  ("full with an unknown dtype name", lambda: Tensor.full((2,), 1.0, dtype="nosuchdtype"), AttributeError),
  ("full of inf as int32", lambda: Tensor.full((2,), float("inf"), dtype=dtypes.int32), OverflowError),
  ("zeros with a float dim", lambda: Tensor.zeros(2, 1.5), RuntimeError),
  ("ones with a str dim", lambda: Tensor.ones("a"), RuntimeError),
  ("arange with a nan bound", lambda: Tensor.arange(0, float("nan")), ValueError),
  ("arange from -inf", lambda: Tensor.arange(float("-inf"), 3), ValueError),
  ("arange with step 0.0", lambda: Tensor.arange(0.0, 1.0, 0.0), ZeroDivisionError),
  ("linspace with -1 steps", lambda: Tensor.linspace(0, 1, -1), ValueError),
  ("linspace of bool", lambda: Tensor.linspace(0, 1, 5, dtype=dtypes.bool), ValueError),
  ("eye with -1 rows", lambda: Tensor.eye(-1), ValueError),
  ("eye with -2 columns", lambda: Tensor.eye(2, -2), ValueError),
  ("rand with a negative dim in a tuple", lambda: Tensor.rand((2, -1)), ValueError),
  ("rand of int32", lambda: Tensor.rand(3, dtype=dtypes.int32), ValueError),
  ("randn with a negative dim", lambda: Tensor.randn(-3), ValueError),
  ("randint with low > high", lambda: Tensor.randint(3, low=5, high=2), ValueError),
  ("randint of float32", lambda: Tensor.randint(3, low=0, high=5, dtype=dtypes.float32), TypeError),
  ("uniform with a negative dim", lambda: Tensor.uniform(2, -2), ValueError),
  ("normal with a negative dim", lambda: Tensor.normal(-1), ValueError),
  ("randperm of -1", lambda: Tensor.randperm(-1), ValueError),
  ("full_like with an unknown dtype name", lambda: Tensor.ones(2).full_like(1, dtype="nosuchdtype"), AttributeError),
  ("rand_like of an int tensor", lambda: Tensor([1, 2]).rand_like(), ValueError),
  ("multinomial of a 3-d tensor", lambda: Tensor.ones(2, 2, 2).multinomial(), AssertionError),
  ("multinomial of 0 samples", lambda: Tensor.ones(3).multinomial(0), AssertionError),
  # movement
  ("reshape to a float dim", lambda: Tensor.ones(2, 3).reshape(2, 1.5), ValueError),
  ("reshape to -2", lambda: Tensor.ones(2, 3).reshape(-2, 3), ValueError),
  ("reshape 6 elements to ()", lambda: Tensor.ones(2, 3).reshape(()), ValueError),
  ("reshape 6 elements to (-1, 4)", lambda: Tensor.ones(2, 3).reshape(-1, 4), ValueError),
  ("reshape 6 elements to (0, -1)", lambda: Tensor.ones(2, 3).reshape(0, -1), ZeroDivisionError),
  ("view 6 elements as (5,)", lambda: Tensor.ones(2, 3).view(5), ValueError),
  ("expand (2,3) to fewer dims", lambda: Tensor.ones(2, 3).expand(3), ValueError),
  ("expand (2,3) to (2,4)", lambda: Tensor.ones(2, 3).expand(2, 4), ValueError),
  ("permute of three dims of a 2-d tensor", lambda: Tensor.ones(2, 3).permute(0, 1, 2), IndexError),
  ("permute (0, 2) of a 2-d tensor", lambda: Tensor.ones(2, 3).permute(0, 2), IndexError),
  ("pad with a bad mode", lambda: Tensor.ones(2, 3).pad((1, 1), mode="nosuchmode"), NotImplementedError),
  ("pad reflect wider than the dim", lambda: Tensor.ones(2, 3).pad((4, 4), mode="reflect"), ValueError),
  ("pad with an odd flat list", lambda: Tensor.ones(2, 3).pad((1, 1, 1)), ValueError),
  ("pad with a flat list longer than the dims", lambda: Tensor.ones(3).pad((1, 1, 1, 1)), ValueError),
  ("pad of three dims of a 2-d tensor", lambda: Tensor.ones(2, 3).pad(((0, 1), (0, 1), (0, 1))), ValueError),
  ("shrink with start after end", lambda: Tensor.ones(2, 3).shrink(((1, 0), None)), ValueError),
  ("shrink from a negative start", lambda: Tensor.ones(2, 3).shrink(((-1, 1), None)), ValueError),
  ("shrink of one dim of a 2-d tensor", lambda: Tensor.ones(2, 3).shrink(((0, 1),)), ValueError),
  ("flip dim 3 of a 2-d tensor", lambda: Tensor.ones(2, 3).flip(3), IndexError),
  ("flip dim 0 twice", lambda: Tensor.ones(2, 3).flip(0, 0), RuntimeError),
  ("repeat with a negative count", lambda: Tensor.ones(2, 3).repeat(-1, 1), ValueError),
  ("repeat_interleave along dim 4", lambda: Tensor.ones(2, 3).repeat_interleave(2, dim=4), IndexError),
  ("split along dim 3", lambda: Tensor.ones(4).split(2, dim=3), IndexError),
  ("split into sizes that sum past the dim", lambda: Tensor.ones(4).split([3, 3]), AssertionError),
  ("split of a tensor size 0", lambda: Tensor.ones(4).split(0), AssertionError),
  ("chunk into -1 chunks", lambda: Tensor.ones(4).chunk(-1), AssertionError),
  ("chunk along dim 2", lambda: Tensor.ones(4).chunk(2, dim=2), IndexError),
  ("unflatten into sizes of another product", lambda: Tensor.ones(6).unflatten(0, (4, 2)), ValueError),
  ("unflatten dim 3", lambda: Tensor.ones(6).unflatten(3, (2, 3)), IndexError),
  ("transpose (-3, 0) of a 2-d tensor", lambda: Tensor.ones(2, 3).transpose(-3, 0), IndexError),
  ("squeeze dim -3", lambda: Tensor.ones(2, 3).squeeze(-3), IndexError),
  ("unsqueeze dim -4", lambda: Tensor.ones(2, 3).unsqueeze(-4), IndexError),
  ("flatten to dim 4", lambda: Tensor.ones(2, 3).flatten(0, 4), IndexError),
  ("cat of a 1-d and a 2-d tensor", lambda: Tensor.ones(3).cat(Tensor.ones(2, 3)), AssertionError),
  ("cat of mismatched shapes off the dim", lambda: Tensor.ones(2, 3).cat(Tensor.ones(3, 2), dim=1), AssertionError),
  ("stack of (2,3) and (3,2)", lambda: Tensor.stack(Tensor.ones(2, 3), Tensor.ones(3, 2)), AssertionError),
  ("stack on dim 5", lambda: Tensor.stack(Tensor.ones(2), Tensor.ones(2), dim=5), IndexError),
  ("roll of more shifts than dims", lambda: Tensor.ones(2, 3).roll((1, 1), dims=0), RuntimeError),
  ("roll along dim 4", lambda: Tensor.ones(2, 3).roll(1, dims=4), IndexError),
  ("diagonal of the same dim twice", lambda: Tensor.ones(3, 3).diagonal(0, 0, 0), RuntimeError),
  ("diag of a 2-d tensor", lambda: Tensor.ones(2, 3).diag(), ValueError),
  ("triu of a 1-d tensor", lambda: Tensor.ones(3).triu(), IndexError),
  ("meshgrid with a bad indexing", lambda: Tensor.ones(2).meshgrid(Tensor.ones(3), indexing="xx"), RuntimeError),
  ("unfold with a size larger than the dim", lambda: Tensor.ones(4).unfold(0, 5, 1), RuntimeError),
  ("unfold with step 0", lambda: Tensor.ones(4).unfold(0, 2, 0), RuntimeError),
  ("rearrange of a mismatched formula", lambda: Tensor.ones(2, 3).rearrange("a b c -> c b a"), IndexError),
  ("pad_to a smaller shape", lambda: Tensor.ones(2, 3).pad_to(1, 3), ValueError),
  # gather / scatter / getitem / setitem
  ("gather with an index of another rank", lambda: Tensor.ones(2, 3).gather(1, Tensor([0, 1])), RuntimeError),
  ("gather with a float index", lambda: Tensor.ones(2, 3).gather(1, Tensor([[0.0], [1.0]])), RuntimeError),
  ("scatter with a bad reduce", lambda: Tensor.zeros(2, 3).scatter(1, Tensor([[0], [1]]), Tensor.ones(2, 1), reduce="nosuchreduce"), TypeError),
  ("scatter_reduce with a bad reduce", lambda: Tensor.zeros(3).scatter_reduce(0, Tensor([0, 1]), Tensor.ones(2), reduce="nosuchreduce"), RuntimeError),
  ("scatter with an index of another rank", lambda: Tensor.zeros(2, 3).scatter(1, Tensor([0, 1]), Tensor.ones(2, 1)), AssertionError),
  ("scatter with a src smaller than the index", lambda: Tensor.zeros(2, 3).scatter(1, Tensor([[0, 1], [1, 2]]), Tensor.ones(2, 1)), AssertionError),
  ("scatter along dim 3", lambda: Tensor.zeros(2, 3).scatter(3, Tensor([[0], [1]]), Tensor.ones(2, 1)), IndexError),
  ("index -3 of a dim of 2", lambda: Tensor.ones(2, 3)[-3], IndexError),
  ("index 3 in dim 1", lambda: Tensor.ones(2, 3)[:, 3], IndexError),
  ("a slice with step 0", lambda: Tensor.ones(4)[::0], ValueError),
  ("two ellipses", lambda: Tensor.ones(2, 3)[..., ...], IndexError),
  ("a str index", lambda: Tensor.ones(2, 3)["a"], IndexError),
  ("a float index", lambda: Tensor.ones(2, 3)[1.5], IndexError),
  ("a float tensor index", lambda: Tensor.ones(2, 3)[Tensor([1.0])], IndexError),
  ("too many indices with None", lambda: Tensor.ones(2)[None, 0, 0], IndexError),
  ("a bool mask of another shape", lambda: Tensor.ones(2, 3)[Tensor([True, False, True])], IndexError),
  ("a bool list of another length", lambda: Tensor.ones(2, 3)[[True, False, True]], IndexError),
  ("setitem of a wrong shape", lambda: setitem(Tensor.zeros(2, 3), 0, Tensor.ones(5)), ValueError),
  ("setitem with an index out of range", lambda: setitem(Tensor.zeros(2, 3), 4, 1.0), IndexError),
  ("setitem with a str index", lambda: setitem(Tensor.zeros(2, 3), "a", 1.0), IndexError),
  ("del of an item", lambda: Tensor.ones(2, 3).__delitem__(0), TypeError),
  ("masked_fill with a mask that does not broadcast", lambda: Tensor.ones(2, 3).masked_fill(Tensor([True, False]), 0.0), IndexError),
  ("masked_select with a float mask", lambda: Tensor.ones(3).masked_select(Tensor([1.0, 0.0, 1.0])), RuntimeError),
  # reductions
  ("sum over axis -3 of a 2-d tensor", lambda: Tensor.ones(2, 3).sum(axis=-3), IndexError),
  ("mean over axis 2", lambda: Tensor.ones(2, 3).mean(axis=2), IndexError),
  ("prod over axis 5", lambda: Tensor.ones(2, 3).prod(axis=5), IndexError),
  ("min over axis (1, 1)", lambda: Tensor.ones(2, 3).min(axis=(1, 1)), RuntimeError),
  ("argmax over axis 3", lambda: Tensor.ones(2, 3).argmax(axis=3), IndexError),
  ("argmin over axis -4", lambda: Tensor.ones(2, 3).argmin(axis=-4), IndexError),
  ("std over axis 7", lambda: Tensor.ones(2, 3).std(axis=7), IndexError),
  ("var over axis 2", lambda: Tensor.ones(2, 3).var(axis=2), IndexError),
  ("logsumexp over axis 4", lambda: Tensor.ones(2, 3).logsumexp(axis=4), IndexError),
  ("log_softmax over axis 2", lambda: Tensor.ones(2, 3).log_softmax(axis=2), IndexError),
  ("any over axis 2", lambda: Tensor([True, False]).any(axis=2), IndexError),
  ("all over axis 3", lambda: Tensor([True, False]).all(axis=3), IndexError),
  ("cumprod over axis 4", lambda: Tensor.ones(2, 3).cumprod(axis=4), IndexError),
  ("cummax over axis 3", lambda: Tensor.ones(2, 3).cummax(axis=3), IndexError),
  ("sort along dim 3", lambda: Tensor.ones(2, 3).sort(dim=3), IndexError),
  ("argsort along dim -5", lambda: Tensor.ones(2, 3).argsort(dim=-5), IndexError),
  ("topk along dim 2", lambda: Tensor.ones(2, 3).topk(1, dim=2), IndexError),
  ("sum over a float axis", lambda: Tensor.ones(2, 3).sum(axis=1.5), TypeError),
  ("normalize along dim 3", lambda: Tensor.ones(2, 3).normalize(dim=3), IndexError),
  # matmul / conv / pool
  ("matmul (2,3,4) @ (5,6)", lambda: Tensor.ones(2, 3, 4) @ Tensor.ones(5, 6), RuntimeError),
  ("batched matmul with batches 2 and 3", lambda: Tensor.ones(2, 3, 4) @ Tensor.ones(3, 4, 5), IndexError),
  ("matmul of 0-d @ 1-d", lambda: Tensor(2.0) @ Tensor.ones(3), RuntimeError),
  ("linear with a weight of another size", lambda: Tensor.ones(2, 3).linear(Tensor.ones(4, 5)), RuntimeError),
  ("linear with a bias that does not broadcast", lambda: Tensor.ones(2, 3).linear(Tensor.ones(3, 4), Tensor.ones(3)), IndexError),
  ("conv2d with 3 groups of 4 channels", lambda: Tensor.ones(1, 4, 5, 5).conv2d(Tensor.ones(3, 4, 3, 3), groups=3), AssertionError),
  ("conv2d with a kernel larger than the input", lambda: Tensor.ones(1, 1, 2, 2).conv2d(Tensor.ones(1, 1, 3, 3)), AssertionError),
  ("conv2d with a padding of 3 values", lambda: Tensor.ones(1, 1, 5, 5).conv2d(Tensor.ones(1, 1, 3, 3), padding=(1, 1, 1)), ValueError),
  ("conv2d with stride 0", lambda: Tensor.ones(1, 1, 5, 5).conv2d(Tensor.ones(1, 1, 3, 3), stride=0), ZeroDivisionError),
  ("conv2d with a bias of another size", lambda: Tensor.ones(1, 1, 5, 5).conv2d(Tensor.ones(2, 1, 3, 3), Tensor.ones(3)), IndexError),
  ("conv2d of a 4-d input with a 3-d weight", lambda: Tensor.ones(1, 1, 5, 5).conv2d(Tensor.ones(1, 1, 3)), AssertionError),
  ("conv_transpose2d with mismatched channels", lambda: Tensor.ones(1, 3, 5, 5).conv_transpose2d(Tensor.ones(2, 4, 3, 3)), AssertionError),
  ("max_pool2d with a kernel larger than the input", lambda: Tensor.ones(1, 1, 2, 2).max_pool2d(kernel_size=(3, 3)), AssertionError),
  ("max_pool2d with kernel size 0", lambda: Tensor.ones(1, 1, 4, 4).max_pool2d(kernel_size=0), ZeroDivisionError),
  ("max_pool2d with stride 0", lambda: Tensor.ones(1, 1, 4, 4).max_pool2d(stride=0), ZeroDivisionError),
  ("avg_pool2d with a padding of 3 values", lambda: Tensor.ones(1, 1, 4, 4).avg_pool2d(padding=(1, 1, 1)), ValueError),
  ("max_pool2d of a 1-d tensor", lambda: Tensor.ones(4).max_pool2d(), ValueError),
  ("interpolate with a bad mode", lambda: Tensor.ones(1, 1, 4, 4).interpolate((2, 2), mode="nosuchmode"), AssertionError),
  ("einsum with an output index not in the inputs", lambda: Tensor.einsum("ij->k", Tensor.ones(2, 3)), RuntimeError),
  ("einsum with too many operands", lambda: Tensor.einsum("ij->i", Tensor.ones(2, 3), Tensor.ones(2, 3)), ValueError),
  ("scaled_dot_product_attention of mismatched dims", lambda: Tensor.ones(1, 2, 3).scaled_dot_product_attention(Tensor.ones(1, 2, 4), Tensor.ones(1, 2, 4)), RuntimeError),
  # dtypes
  ("bitcast (3,) float32 to int64", lambda: Tensor.ones(3).bitcast(dtypes.int64), RuntimeError),
  ("bitcast a 0-d float32 to float16", lambda: Tensor(1.0).bitcast(dtypes.float16), RuntimeError),
  ("cast to an unknown dtype name", lambda: Tensor.ones(2).cast("nosuchdtype"), AttributeError),
  ("cast to python int", lambda: Tensor.ones(2).cast(int), AttributeError),
  ("float | float", lambda: Tensor([1.0]) | Tensor([2.0]), RuntimeError),
  ("float ^ float", lambda: Tensor([1.0]) ^ Tensor([2.0]), RuntimeError),
  ("float << 1", lambda: Tensor([1.0]) << 1, RuntimeError),
  ("float >> 1", lambda: Tensor([1.0]) >> 1, RuntimeError),
  ("int << float", lambda: Tensor([1]) << 1.5, RuntimeError),
  ("bitwise_xor of floats", lambda: Tensor([1.0]).bitwise_xor(1), RuntimeError),
  ("bitwise_and of int and float", lambda: Tensor([1]).bitwise_and(Tensor([1.5])), RuntimeError),
  ("where on an int condition", lambda: Tensor([1, 0]).where(1.0, 2.0), RuntimeError),
  ("~ of float16", lambda: ~Tensor([1.0], dtype=dtypes.float16), RuntimeError),
  ("bitwise_not of floats", lambda: Tensor([1.0]).bitwise_not(), RuntimeError),
  ("one_hot of floats", lambda: Tensor([1.0, 2.0]).one_hot(3), RuntimeError),
  ("a dtype name of a python float", lambda: Tensor.ones(2, dtype=float), AttributeError),
  # nn
  ("Linear of an input with another size", lambda: nn.Linear(3, 4)(Tensor.ones(2, 5)), RuntimeError),
  ("Conv2d of an input with other channels", lambda: nn.Conv2d(3, 4, 3)(Tensor.ones(1, 2, 5, 5)), AssertionError),
  ("Conv2d of a 3-d input", lambda: nn.Conv2d(3, 4, 3)(Tensor.ones(3, 5, 5)), AssertionError),
  ("BatchNorm of an input with other channels", lambda: nn.BatchNorm(3)(Tensor.ones(2, 4, 5, 5)), ValueError),
  ("Embedding of a float index", lambda: nn.Embedding(10, 4)(Tensor([[1.5]])), TypeError),
  ("LayerNorm of an input with another last dim", lambda: nn.LayerNorm(4)(Tensor.ones(2, 3)), AssertionError),
  ("GroupNorm of channels that do not split", lambda: nn.GroupNorm(2, 4)(Tensor.ones(1, 3, 2, 2)), IndexError),
  ("RMSNorm of an input with another last dim", lambda: nn.RMSNorm(4)(Tensor.ones(2, 3)), IndexError),
  ("InstanceNorm of an input with other channels", lambda: nn.InstanceNorm(3)(Tensor.ones(1, 4, 2, 2)), ValueError),
  ("Conv2d with kernel size 0", lambda: nn.Conv2d(1, 1, 0)(Tensor.ones(1, 1, 4, 4)), ZeroDivisionError),
  # optimizers
  ("SGD of no params", lambda: nn.optim.SGD([], lr=0.1), AssertionError),
  ("Adam of a list of ints", lambda: nn.optim.Adam([1, 2]), AttributeError),
  ("SGD step outside training", lambda: nn.optim.SGD([param(3)]).step(), RuntimeError),
  # gradients
  ("backward with a gradient of another shape", lambda: backward_with_gradient_of_another_shape(), ValueError),
  ("gradient of a non-scalar", lambda: gradient_of_a_non_scalar(), AssertionError),
  ("backward of an int tensor", lambda: Tensor([1, 2]).sum().backward(), RuntimeError),
  # realize / item / tolist / python protocol
  ("item of an empty tensor", lambda: Tensor([]).item(), AssertionError),
  ("item of a (2,3) tensor", lambda: Tensor.ones(2, 3).item(), AssertionError),
  ("int of 3 elements", lambda: int(Tensor.ones(3)), TypeError),
  ("float of 2 elements", lambda: float(Tensor.ones(2)), TypeError),
  ("bool of 2 elements", lambda: bool(Tensor.ones(2)), TypeError),
  ("len of a 0-d tensor", lambda: len_of(Tensor(1.0)), TypeError),
  ("realize of a non-tensor", lambda: Tensor.realize(Tensor.ones(2), 3), AttributeError),
  # assign
  ("assign of another shape", lambda: assign(Tensor.zeros(3).contiguous(), Tensor.ones(4)), ValueError),
  ("assign of another dtype", lambda: assign(Tensor.zeros(3).contiguous(), Tensor.ones(3, dtype=dtypes.int32)), RuntimeError),
  ("assign of a tensor on another device", lambda: assign(Tensor.zeros(3).contiguous(), Tensor.ones(3, device="CPU" if Device.DEFAULT != "CPU" else "CPU:1")), RuntimeError),
  # TinyJit
  ("TinyJit with the same tensor twice", lambda: jit_duplicate_inputs(), JitError),
  ("TinyJit returning a non-tensor", lambda: jit_non_tensor_return(), JitError),
  ("TinyJit of a function that runs no kernel", lambda: jit_nothing(), JitError),
  ("TinyJit called inside TinyJit", lambda: jit_nested(), RuntimeError),
  ("gradient with respect to a non-tensor", lambda: (param(3) * 2).sum().gradient(3), AttributeError),
  ("a dtype given as an int", lambda: Tensor([1.0], dtype=3), AttributeError),
  ("flip dim -3", lambda: Tensor.ones(2, 3).flip(-3), IndexError),
  ("shrink past the end of dim 1", lambda: Tensor.ones(2, 3).shrink((None, (1, 4))), ValueError),
  ("pad with a negative pad larger than the dim", lambda: Tensor.ones(2, 3).pad(((0, 0), (-4, 0))), ValueError),
  ("two tensor indices that do not broadcast", lambda: Tensor.ones(2, 3)[Tensor([0, 5, 1]), Tensor([0, 1])], IndexError),
  ("a 2-d bool mask of another shape", lambda: Tensor.ones(2, 3)[Tensor([[True, False], [False, True]])], IndexError),
  ("cross_entropy of mismatched shapes", lambda: Tensor.ones(2, 3).cross_entropy(Tensor.ones(2, 4)), RuntimeError),
  ("sparse_categorical_crossentropy of a float target", lambda: Tensor.ones(2, 3).sparse_categorical_crossentropy(Tensor([0.5, 1.5])), RuntimeError),
  ("binary_crossentropy with a bad reduction", lambda: Tensor.ones(3).sigmoid().binary_crossentropy(Tensor.ones(3), reduction="nosuch"), ValueError),
  ("nll_loss with a bad reduction", lambda: Tensor.ones(2, 3).log_softmax().nll_loss(Tensor([0, 1]), reduction="nosuch"), ValueError),
  ("dropout with p > 1", lambda: dropout_train(1.5), ValueError),
  ("layernorm over axis 3", lambda: Tensor.ones(2, 3).layernorm(axis=3), IndexError),
  ("batchnorm with a weight of another size", lambda: Tensor.ones(2, 3).batchnorm(Tensor.ones(4), None, Tensor.zeros(3), Tensor.ones(3)), ValueError),
  ("clamp with neither bound", lambda: Tensor.ones(3).clamp(), RuntimeError),
  ("lerp of shapes that do not broadcast", lambda: Tensor.ones(2).lerp(Tensor.ones(3), 0.5), IndexError),
  ("maximum of shapes that do not broadcast", lambda: Tensor.ones(2).maximum(Tensor.ones(3)), IndexError),
  ("eq of shapes that do not broadcast", lambda: Tensor.ones(2) == Tensor.ones(3), IndexError),
  ("lt of shapes that do not broadcast", lambda: Tensor.ones(2, 3) < Tensor.ones(3, 2), IndexError),
  ("div of shapes that do not broadcast", lambda: Tensor.ones(4) / Tensor.ones(3), IndexError),
  ("mod of shapes that do not broadcast", lambda: Tensor.ones(2, dtype=dtypes.int32) % Tensor.ones(3, dtype=dtypes.int32), IndexError),
  ("cat of a tensor and a list", lambda: Tensor.ones(2).cat([1, 2]), AttributeError),
  ("cat along dim -3", lambda: Tensor.ones(2, 3).cat(Tensor.ones(2, 3), dim=-3), IndexError),
  ("pow of shapes that do not broadcast", lambda: Tensor.ones(2) ** Tensor.ones(3), IndexError),
  ("dot of a 3-d and a 1-d of another size", lambda: Tensor.ones(2, 3, 4).dot(Tensor.ones(5)), RuntimeError),
  ("avg_pool2d with stride 0", lambda: Tensor.ones(1, 1, 4, 4).avg_pool2d(stride=0), ZeroDivisionError),
  ("avg_pool2d with kernel size 0", lambda: Tensor.ones(1, 1, 4, 4).avg_pool2d(kernel_size=0), ZeroDivisionError),
  ("conv2d with a stride tuple of 3", lambda: Tensor.ones(1, 1, 5, 5).conv2d(Tensor.ones(1, 1, 3, 3), stride=(1, 1, 1)), AssertionError),
  ("max_pool2d with a stride tuple of 3", lambda: Tensor.ones(1, 1, 4, 4).max_pool2d(stride=(1, 1, 1)), AssertionError),
  ("conv2d with a negative padding past the kernel", lambda: Tensor.ones(1, 1, 5, 5).conv2d(Tensor.ones(1, 1, 3, 3), padding=-2), AssertionError),
  ("arange given a device (it has none)", lambda: Tensor.arange(8, device="CPU"), TypeError),
  ("eye given a device (it has none)", lambda: Tensor.eye(3, device="CPU"), TypeError),
  # devices
]
for name, f, exc in cases:
  try:
    r = f()
    if isinstance(r, Tensor): r.tolist()
    print(name, "- no error")
  except exc:
    print(name, "-", exc.__name__)
  except Exception as e:  # the wrong class: said, and the next case goes on
    print(name, "- raised", next(c.__name__ for c in type(e).__mro__ if c.__module__ == "builtins"), "instead of", exc.__name__)
