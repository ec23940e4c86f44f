# flip after pad, shrink of a flip, and a padded sum
from tinygrad import Tensor
x = Tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).realize()
RESULT = {"fp": x.pad(((0, 1), (1, 0))).flip(0).tolist(), "sf": x.flip(1)[:, 1:].tolist(), "ps": x.pad(((1, 1), (1, 1))).sum(axis=0).tolist()}
print(RESULT)
