# a pre-norm transformer block (LayerNorm, causal self-attention, GELU MLP, residuals): loss, gradients of the weights
from tinygrad import Tensor, nn
def w(n, m, s): return Tensor([[((i * 7 + j * 3 + s) % 11 - 5) / 20 for j in range(m)] for i in range(n)])
class Block:
  def __init__(self, d):
    self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
    self.wq, self.wk, self.wv, self.wo = w(d, d, 1), w(d, d, 2), w(d, d, 3), w(d, d, 4)
    self.w1, self.w2 = w(d, 2 * d, 5), w(2 * d, d, 6)
  def __call__(self, x):
    h = self.ln1(x)
    q, k, v = h.matmul(self.wq), h.matmul(self.wk), h.matmul(self.wv)
    x = x + q.scaled_dot_product_attention(k, v, is_causal=True).matmul(self.wo)
    return x + self.ln2(x).matmul(self.w1).gelu().matmul(self.w2)
blk = Block(4)
x = Tensor([[[((t * 4 + c) % 7 - 3) / 3 for c in range(4)] for t in range(3)]])
loss = blk(x).square().mean()
loss.backward()
RESULT = {"loss": loss.item(), "dwq": blk.wq.grad.tolist(), "dw2": blk.w2.grad.tolist(), "dln1": blk.ln1.weight.grad.tolist()}
print(RESULT)
