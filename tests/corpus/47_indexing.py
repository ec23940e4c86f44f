# integer, slice and tensor indexing
from tinygrad import Tensor
x = Tensor([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0]]).realize()
idx = Tensor([2, 0, 1, 2])
RESULT = {"row": x[1].tolist(), "col": x[:, 2].tolist(), "slice": x[0:2, 1:3].tolist(), "step": x[:, ::2].tolist(),
          "gather": x[idx].tolist()}
print(RESULT)
