# sin, cos, log, log2, exp2, sqrt of a reduced value
from tinygrad import Tensor
x = Tensor([0.1, 0.7, 1.3, 2.9]).realize()
RESULT = {"cos": x.cos().tolist(), "log2": x.log2().tolist(), "exp2": x.exp2().tolist(), "rs": x.rsqrt().tolist(), "sq": x.sum().sqrt().item()}
print(RESULT)
