# scaled_dot_product_attention backward with a causal mask: gradients of q, k and v
from tinygrad import Tensor
q = Tensor([[[0.1, 0.2], [0.3, -0.1], [0.0, 0.5]]])
k = Tensor([[[0.2, -0.3], [0.1, 0.1], [-0.4, 0.2]]])
v = Tensor([[[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]]])
out = q.scaled_dot_product_attention(k, v, is_causal=True)
(out * Tensor([[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]])).sum().backward()
RESULT = {"dq": q.grad.tolist(), "dk": k.grad.tolist(), "dv": v.grad.tolist()}
print(RESULT)
