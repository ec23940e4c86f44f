# cumprod, cummax (values, indices), cummin, logcumsumexp
from tinygrad import Tensor
x = Tensor([[0.5, 2.0, -1.0, 1.5, 3.0], [1.0, -2.0, 0.25, 4.0, -0.5]]).realize()
v, i = x.cummax(1)
mv, mi = x.cummin(0)
RESULT = {"cumprod": x.cumprod(1).tolist(), "cummax_v": v.tolist(), "cummax_i": i.tolist(), "cummin_v": mv.tolist(),
          "cummin_i": mi.tolist(), "lcse": x.logcumsumexp(1).tolist()}
print(RESULT)
