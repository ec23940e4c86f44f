# devices: CPU INTERP VULKAN
# bad programs raise the reference's exception class (code that catches the reference's exceptions catches ours; the
# messages are ours): each line is what `except CLASS` caught, recorded from the reference
from tinygrad import Tensor, Device, dtypes
def nonscalar_backward():
  t = Tensor.ones(3)
  t.requires_grad = True
  t.mul(2).backward()

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
