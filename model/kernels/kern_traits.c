/* kern_traits.c: the compute table (kern_traits.h): for each weight type, the tile of each
 * instruction set in both kernel modes. A NULL tile runs that ISA's generic path (same bits,
 * slower); KERN_X86_FN compiles a tile's name out on other architectures. */
#include "model/kernels/kern_traits.h"

#include <stddef.h>

#include "model/kernels/kernels_isa.h"
#include "model/weights/wtype_blocks.h"

#define X86 KERN_X86_FN
static const kern_traits table[WTYPE_COUNT] = {
    [WTYPE_F32] =
        {.exact.isa =
             {[KERN_ISA_AVX2] = X86(kern_avx2_f32), [KERN_ISA_AVX512] = X86(kern_avx512_f32)}},
    [WTYPE_F16] =
        {.exact.isa =
             {[KERN_ISA_AVX2] = X86(kern_avx2_f16), [KERN_ISA_AVX512] = X86(kern_avx512_f16)}},
    [WTYPE_BF16] =
        {.exact.isa =
             {[KERN_ISA_AVX2] = X86(kern_avx2_bf16), [KERN_ISA_AVX512] = X86(kern_avx512_bf16)}},
    [WTYPE_Q8_0] =
        {.exact.isa =
             {[KERN_ISA_AVX2] = X86(kern_avx2_q8_0), [KERN_ISA_AVX512] = X86(kern_avx512_q8_0)},
         .int8 = {.to_int8 = wtype_q8_0_to_int8,
                  .isa = {[KERN_ISA_AVX2] = X86(kern_avx2_int8_q8_0),
                          [KERN_ISA_AVX512] = X86(kern_vnni_q8_0)}},
         .int8b = {[KERN_ISA_AVX2] = X86(kern_avx2_int8b_q8_0),
                   [KERN_ISA_AVX512] = X86(kern_vnni8b_q8_0)},
         .int8b_avxvnni = X86(kern_avxvnni_int8b_q8_0)},
    [WTYPE_Q4_0] =
        {.exact.isa =
             {[KERN_ISA_AVX2] = X86(kern_avx2_q4_0), [KERN_ISA_AVX512] = X86(kern_avx512_q4_0)},
         .int8 = {.to_int8 = wtype_q4_0_to_int8,
                  .isa = {[KERN_ISA_AVX2] = X86(kern_avx2_int8_q4_0),
                          [KERN_ISA_AVX512] = X86(kern_vnni_q4_0)},
                  .pack = X86(wtype_q4_0_pack8),
                  .pack_rows = 8,
                  .packed_isa = KERN_ISA_AVX2,
                  .packed = X86(kern_avx2_packed_q4_0)},
         .int8b = {[KERN_ISA_AVX2] = X86(kern_avx2_int8b_q4_0),
                   [KERN_ISA_AVX512] = X86(kern_vnni8b_q4_0)},
         .int8b_avxvnni = X86(kern_avxvnni_int8b_q4_0)},
    [WTYPE_Q4_1] =
        {.exact.isa =
             {[KERN_ISA_AVX2] = X86(kern_avx2_q4_1), [KERN_ISA_AVX512] = X86(kern_avx512_q4_1)},
         .int8 = {.to_int8 = wtype_q4_1_to_int8,
                  .has_min = 1,
                  .isa = {[KERN_ISA_AVX2] = X86(kern_avx2_int8_q4_1),
                          [KERN_ISA_AVX512] = X86(kern_vnni_q4_1)}},
         .int8b = {[KERN_ISA_AVX2] = X86(kern_avx2_int8b_q4_1),
                   [KERN_ISA_AVX512] = X86(kern_vnni8b_q4_1)},
         .int8b_avxvnni = X86(kern_avxvnni_int8b_q4_1)},
    [WTYPE_Q5_0] =
        {.exact.isa =
             {[KERN_ISA_AVX2] = X86(kern_avx2_q5_0), [KERN_ISA_AVX512] = X86(kern_avx512_q5_0)},
         .int8 = {.to_int8 = wtype_q5_0_to_int8,
                  .isa = {[KERN_ISA_AVX2] = X86(kern_avx2_int8_q5_0),
                          [KERN_ISA_AVX512] = X86(kern_vnni_q5_0)}},
         .int8b = {[KERN_ISA_AVX2] = X86(kern_avx2_int8b_q5_0),
                   [KERN_ISA_AVX512] = X86(kern_vnni8b_q5_0)},
         .int8b_avxvnni = X86(kern_avxvnni_int8b_q5_0)},
    [WTYPE_Q5_1] =
        {.exact.isa =
             {[KERN_ISA_AVX2] = X86(kern_avx2_q5_1), [KERN_ISA_AVX512] = X86(kern_avx512_q5_1)},
         .int8 = {.to_int8 = wtype_q5_1_to_int8,
                  .has_min = 1,
                  .isa = {[KERN_ISA_AVX2] = X86(kern_avx2_int8_q5_1),
                          [KERN_ISA_AVX512] = X86(kern_vnni_q5_1)}},
         .int8b = {[KERN_ISA_AVX2] = X86(kern_avx2_int8b_q5_1),
                   [KERN_ISA_AVX512] = X86(kern_vnni8b_q5_1)},
         .int8b_avxvnni = X86(kern_avxvnni_int8b_q5_1)},
    [WTYPE_Q2_K] =
        {.exact.isa =
             {[KERN_ISA_AVX2] = X86(kern_avx2_q2_k), [KERN_ISA_AVX512] = X86(kern_avx512_q2_k)}},
    [WTYPE_Q3_K] =
        {.exact.isa =
             {[KERN_ISA_AVX2] = X86(kern_avx2_q3_k), [KERN_ISA_AVX512] = X86(kern_avx512_q3_k)},
         .int8 = {.to_int8 = wtype_q3_k_to_int8,
                  .isa = {[KERN_ISA_AVX2] = X86(kern_avx2_int8_q3_k),
                          [KERN_ISA_AVX512] = X86(kern_vnni_q3_k)}},
         .int8b = {[KERN_ISA_AVX2] = X86(kern_avx2_int8b_q3_k),
                   [KERN_ISA_AVX512] = X86(kern_vnni8b_q3_k)},
         .int8b_avxvnni = X86(kern_avxvnni_int8b_q3_k)},
    [WTYPE_Q4_K] =
        {.exact.isa =
             {[KERN_ISA_AVX2] = X86(kern_avx2_q4_k), [KERN_ISA_AVX512] = X86(kern_avx512_q4_k)},
         .int8 = {.to_int8 = wtype_q4_k_to_int8,
                  .has_min = 1,
                  .isa = {[KERN_ISA_AVX2] = X86(kern_avx2_int8_q4_k),
                          [KERN_ISA_AVX512] = X86(kern_vnni_q4_k)},
                  .pack = X86(wtype_q4_k_pack8),
                  .pack_rows = 8,
                  .packed_isa = KERN_ISA_AVX2,
                  .packed = X86(kern_avx2_packed_q4_k)},
         .int8b = {[KERN_ISA_AVX2] = X86(kern_avx2_int8b_q4_k),
                   [KERN_ISA_AVX512] = X86(kern_vnni8b_q4_k)},
         .int8b_avxvnni = X86(kern_avxvnni_int8b_q4_k)},
    [WTYPE_Q5_K] =
        {.exact.isa =
             {[KERN_ISA_AVX2] = X86(kern_avx2_q5_k), [KERN_ISA_AVX512] = X86(kern_avx512_q5_k)},
         .int8 = {.to_int8 = wtype_q5_k_to_int8,
                  .has_min = 1,
                  .isa = {[KERN_ISA_AVX2] = X86(kern_avx2_int8_q5_k),
                          [KERN_ISA_AVX512] = X86(kern_vnni_q5_k)}},
         .int8b = {[KERN_ISA_AVX2] = X86(kern_avx2_int8b_q5_k),
                   [KERN_ISA_AVX512] = X86(kern_vnni8b_q5_k)},
         .int8b_avxvnni = X86(kern_avxvnni_int8b_q5_k)},
    [WTYPE_Q6_K] =
        {.exact.isa =
             {[KERN_ISA_AVX2] = X86(kern_avx2_q6_k), [KERN_ISA_AVX512] = X86(kern_avx512_q6_k)},
         .int8 = {.to_int8 = wtype_q6_k_to_int8,
                  .isa = {[KERN_ISA_AVX2] = X86(kern_avx2_int8_q6_k),
                          [KERN_ISA_AVX512] = X86(kern_vnni_q6_k)},
                  .pack = X86(wtype_q6_k_pack8),
                  .pack_rows = 8,
                  .packed_isa = KERN_ISA_AVX2,
                  .packed = X86(kern_avx2_packed_q6_k)},
         .int8b = {[KERN_ISA_AVX2] = X86(kern_avx2_int8b_q6_k),
                   [KERN_ISA_AVX512] = X86(kern_vnni8b_q6_k)},
         .int8b_avxvnni = X86(kern_avxvnni_int8b_q6_k)},
};
#undef X86

const kern_traits *kern_traits_get(wtype t) {
    return &table[t];
}
