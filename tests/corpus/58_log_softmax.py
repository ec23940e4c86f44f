# log_softmax and logsumexp
from tinygrad import Tensor
x = Tensor([[1.0, 2.0, 3.0], [0.0, 0.0, 10.0]]).realize()
RESULT = {"ls": x.log_softmax(axis=1).tolist(), "lse": x.logsumexp(axis=1).tolist()}
print(RESULT)
