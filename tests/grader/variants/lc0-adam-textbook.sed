# Right, written another way: Adam as the textbook writes it, the bias
# corrections applied to m and v (m_hat, v_hat) instead of folded into the step
# size and the denominator. The same arithmetic in another order: other
# roundings, the same training.
# file: common/kernels_cpu.c
/^    float b1 = h->beta1, b2 = h->beta2, eps = h->eps;/a\
    float bc1 = (float)(1.0 - pow(b1, (double)step)), bc2 = (float)(1.0 - pow(b2, (double)step));
/^        float denom = sqrtf(v\[i\]) \/ bc2_sqrt + eps;$/d
s|^        p\[i\] = p\[i\] \* decay - step_size \* m\[i\] / denom;$|        float m_hat = m[i] / bc1, v_hat = v[i] / bc2;\
        p[i] = p[i] * decay - h->lr * m_hat / (sqrtf(v_hat) + eps);|
