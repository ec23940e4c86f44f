# gradient of sparse_categorical_crossentropy and of a log_softmax/softmax head with respect to logits
from tinygrad import Tensor
logits = Tensor([[1.0, 2.0, 0.5, -1.0], [0.1, -0.3, 2.2, 0.0], [1.5, 1.5, -2.0, 0.3]])
y = Tensor([1, 2, 0])
loss = logits.sparse_categorical_crossentropy(y)
loss.backward()
g1 = logits.grad.tolist()
z = Tensor([[0.5, -0.5, 1.0]])
(z.softmax() * Tensor([[1.0, 2.0, 3.0]])).sum().backward()
RESULT = {"loss": loss.item(), "dlogits": g1, "dsoftmax": z.grad.tolist()}
print(RESULT)
