/* kernels_avxvnni_int8b.c: the int8b mode's AVX2 tiles with AVX-VNNI's 256-bit vpdpbusd in place
 * of vpmaddubsw + vpmaddwd (kern_avxvnni_int8b_*): kernels_avx2_int8b.c compiled a second time,
 * with AVX2_INT8B_VNNI set and -mavxvnni (CMakeLists.txt). Same bits as the plain AVX2 tiles and
 * the scalar reference; kernels_int8b.c picks them where the CPU has AVX-VNNI (cpuid 7.1 eax bit
 * 4) and the AVX2 tiles run, unless DECBENCH_AVXVNNI=0. */
#define AVX2_INT8B_VNNI 1
#include "model/kernels/kernels_avx2_int8b.c"
