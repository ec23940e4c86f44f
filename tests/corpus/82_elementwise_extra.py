# sign, clamp/clip, erf, asinh/acosh/atanh, sinh/cosh, asin/acos/atan, logsigmoid, selu, softsign, logaddexp, copysign, fmod
from tinygrad import Tensor
x = Tensor([-2.5, -0.5, 0.0, 0.3, 0.9, 1.7]).realize()
s = Tensor([-0.9, -0.4, 0.0, 0.2, 0.5, 0.8]).realize()
RESULT = {"sign": x.sign().tolist(), "clamp": x.clamp(-1, 1).tolist(), "clip": x.clip(0.1, 5).tolist(),
          "erf": x.erf().tolist(), "asinh": x.asinh().tolist(), "acosh": (x.abs() + 1).acosh().tolist(), "atanh": s.atanh().tolist(),
          "sinh": x.sinh().tolist(), "cosh": x.cosh().tolist(), "asin": s.asin().tolist(), "acos": s.acos().tolist(),
          "atan": x.atan().tolist(), "logsigmoid": x.logsigmoid().tolist(), "selu": x.selu().tolist(), "softsign": x.softsign().tolist(),
          "logaddexp": x.logaddexp(s).tolist(), "copysign": s.copysign(x).tolist(), "fmod": x.fmod(0.7).tolist()}
print(RESULT)
