// A tfm module written by hand: its arguments and result have no names.
func.func @main(%x: tensor<1x16xf32>, %w: tensor<16x8xf32>) -> tensor<1x8xf32> {
  %y = tfm.matmul %x, %w : (tensor<1x16xf32>, tensor<16x8xf32>) -> tensor<1x8xf32>
  return %y : tensor<1x8xf32>
}
