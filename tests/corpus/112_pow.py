# powers: square, cube, sqrt, negative and fractional exponents, tensor exponent
from tinygrad import Tensor
x = Tensor([1.0, 2.0, 3.0, 4.0]).realize()
e = Tensor([2.0, 0.5, -1.0, 3.0]).realize()
RESULT = {"sq": (x ** 2).tolist(), "cube": (x ** 3).tolist(), "half": (x ** 0.5).tolist(), "neg": (x ** -1).tolist(), "t": (x ** e).tolist(), "rpow": (2 ** x).tolist()}
print(RESULT)
