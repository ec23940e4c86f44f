# exp, log, sqrt, sin, reciprocal on a small vector
from tinygrad import Tensor
x = Tensor([0.5, 1.0, 2.0, 3.0, 4.0]).realize()
RESULT = {"exp": x.exp().tolist(), "log": x.log().tolist(), "sqrt": x.sqrt().tolist(), "sin": x.sin().tolist(),
          "recip": (1 / x).tolist(), "sigmoid": x.sigmoid().tolist()}
print(RESULT)
