# dropout under Context(TRAINING=1): mask from rand_like (>= p) realized, then where/scale; identity outside training
from tinygrad import Tensor
from tinygrad.helpers import Context
Tensor.manual_seed(4)
x = Tensor([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]).realize()
with Context(TRAINING=1):
  d = x.dropout(0.5).tolist()
RESULT = {"train": d, "eval": x.dropout(0.5).tolist()}
print(RESULT)
