# initializers: kaiming_uniform, glorot_uniform, scaled_uniform, kaiming_normal
from tinygrad import Tensor
Tensor.manual_seed(3)
RESULT = {"kaiming": Tensor.kaiming_uniform(4, 3).tolist(), "glorot": Tensor.glorot_uniform(3, 5).tolist(),
          "scaled": Tensor.scaled_uniform(2, 2).tolist(), "kaiming_normal": Tensor.kaiming_normal(2, 3).tolist()}
print(RESULT)
