# logsumexp (axis, keepdim), softmin, var_mean/std_mean, isclose/allclose
from tinygrad import Tensor
x = Tensor([[1.0, 2.0, 3.0, 0.5], [-1.0, 0.0, 4.0, 2.0]]).realize()
v, m = x.var_mean(1)
s, m2 = x.std_mean(axis=0, correction=0)
RESULT = {"lse": x.logsumexp(1).tolist(), "lse_k": x.logsumexp(0, keepdim=True).tolist(), "softmin": x.softmin(-1).tolist(),
          "var": v.tolist(), "mean": m.tolist(), "std": s.tolist(), "mean2": m2.tolist(),
          "isclose": x.isclose(x + 1e-7).tolist(), "allclose": x.allclose(x * 1.01).item()}
print(RESULT)
