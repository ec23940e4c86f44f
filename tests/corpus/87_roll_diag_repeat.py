# roll, diag, diagonal, repeat_interleave, unfold, meshgrid, linspace
from tinygrad import Tensor
x = Tensor([[float(i * 4 + j) for j in range(4)] for i in range(3)]).realize()
v = Tensor([1.0, 2.0, 3.0]).realize()
gx, gy = v.meshgrid(Tensor([10.0, 20.0]))
RESULT = {"roll": x.roll(1, 1).tolist(), "roll2": x.roll((1, -1), (0, 1)).tolist(), "diag": v.diag().tolist(),
          "diagonal": x.diagonal().tolist(), "diag_off": x.diagonal(offset=1).tolist(), "ri": v.repeat_interleave(2).tolist(),
          "ri_dim": x.repeat_interleave(2, dim=0).tolist(), "unfold": v.unfold(0, 2, 1).tolist(), "gx": gx.tolist(), "gy": gy.tolist(),
          "linspace": Tensor.linspace(0, 1, 5).tolist()}
print(RESULT)
