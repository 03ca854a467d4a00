/*
 * test_liq_field.c - the job's numbers against independent oracles (issue
 * 32): the runtime's coefficients (liq_coeffs, lib/liquid/liq_geom.c), the
 * reference kernels it runs with them, and liq_reference (liq_field.c).
 *
 * The bit-identity checks elsewhere compare the runtime with a reference
 * built from the same kernels and coefficients, so a bug they share is
 * invisible there.  Here the expected numbers come from the formula alone:
 *
 *   u'(p) = c * (sum of p's 6 neighbours - c2 * rhs(p)),
 *   c = 1/6, c2 = h^2, h = 1/(max(N) + 1)     (seed 000 s3.1, liq.h)
 *
 * either worked out by hand (the derivations are beside the numbers) or by
 * a separate, obvious implementation written below with plain arrays.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "kern.h"
#include "liq.h"

#define EPS 1e-14

/*
 * The hand-worked grid: 3 x 3 x 3 interior points, the Dirichlet ghosts all
 * 1, the interior 0.  By symmetry four kinds of interior point exist:
 *   corner (1,1,1): 3 ghost neighbours, 3 edge points;
 *   edge   (2,1,1): 2 ghosts, 2 corners, 2 face centres;
 *   face   (2,2,1): 1 ghost, 4 edges, the centre;
 *   centre (2,2,2): 6 face centres.
 * With N = 3, h = 1/4 and c2 = 1/16.
 */
static void
hand_grid(struct kern_box *u, struct kern_box *rhs, double rhs_value)
{
    assert_int_equal(kern_box_alloc(u, 3, 3, 3, 0, 0), 0);
    assert_int_equal(kern_box_alloc(rhs, 3, 3, 3, 0, 0), 0);
    for (int k = 0; k < 5; k++)
        for (int j = 0; j < 5; j++)
            for (int i = 0; i < 5; i++) {
                int ghost = i == 0 || i == 4 || j == 0 || j == 4 || k == 0 || k == 4;

                *kern_at(u, i, j, k) = ghost ? 1.0 : 0.0;
                *kern_at(rhs, i, j, k) = rhs_value;
            }
}

static void
assert_point(const struct kern_box *b, int i, int j, int k, double want)
{
    double got = *kern_at(b, i, j, k);

    if (fabs(got - want) > EPS)
        fail_msg("point (%d,%d,%d): got %.17g, the formula gives %.17g", i, j, k, got, want);
}

static void
test_liq_coeffs_are_one_sixth_and_h_squared(void **state)
{
    const int cube[3] = { 3, 3, 3 }, flat[3] = { 2, 4, 3 };
    double c, c2;

    (void)state;
    liq_coeffs(cube, &c, &c2);
    assert_true(fabs(c - 1.0 / 6) < EPS);
    assert_true(fabs(c2 - 1.0 / 16) < EPS);        /* h = 1/(3+1) */
    liq_coeffs(flat, &c, &c2);
    assert_true(fabs(c - 1.0 / 6) < EPS);
    assert_true(fabs(c2 - 1.0 / 25) < EPS);        /* h = 1/(max 4 + 1) */
}

/*
 * Jacobi, rhs 0.  Sweep 1 sees only ghosts: corner 3/6 = 1/2, edge 2/6 =
 * 1/3, face 1/6, centre 0.  Sweep 2: corner (3 + 3*1/3)/6 = 2/3; edge
 * (2 + 2*1/2 + 2*1/6)/6 = (10/3)/6 = 5/9; face (1 + 4*1/3 + 0)/6 = 7/18;
 * centre 6*(1/6)/6 = 1/6.
 */
static void
test_liq_jacobi_oracle_by_hand(void **state)
{
    struct kern_box u, v, rhs;
    const int n[3] = { 3, 3, 3 };
    double c, c2;

    (void)state;
    hand_grid(&u, &rhs, 0);
    assert_int_equal(kern_box_alloc(&v, 3, 3, 3, 0, 0), 0);
    assert_int_equal(kern_box_copy(&v, &u), 0);
    liq_coeffs(n, &c, &c2);
    assert_int_equal(kern_jacobi_ref(&v, &u, &rhs, c, c2), 0);
    assert_point(&v, 1, 1, 1, 1.0 / 2);
    assert_point(&v, 3, 3, 3, 1.0 / 2);
    assert_point(&v, 2, 1, 1, 1.0 / 3);
    assert_point(&v, 2, 2, 1, 1.0 / 6);
    assert_point(&v, 2, 2, 2, 0.0);
    assert_int_equal(kern_jacobi_ref(&u, &v, &rhs, c, c2), 0);
    assert_point(&u, 1, 1, 1, 2.0 / 3);
    assert_point(&u, 2, 1, 1, 5.0 / 9);
    assert_point(&u, 1, 3, 2, 5.0 / 9);
    assert_point(&u, 2, 2, 1, 7.0 / 18);
    assert_point(&u, 2, 2, 2, 1.0 / 6);
    assert_point(&u, 0, 2, 2, 1.0);                 /* ghosts are never written */
    kern_box_free(&u);
    kern_box_free(&v);
    kern_box_free(&rhs);
}

/* Jacobi, rhs 1, so c2 = h^2 = 1/16 counts: sweep 1 gives the corner
 * (3 - 1/16)/6 = 47/96 and the centre (0 - 1/16)/6 = -1/96. */
static void
test_liq_jacobi_oracle_with_rhs(void **state)
{
    struct kern_box u, v, rhs;
    const int n[3] = { 3, 3, 3 };
    double c, c2;

    (void)state;
    hand_grid(&u, &rhs, 1.0);
    assert_int_equal(kern_box_alloc(&v, 3, 3, 3, 0, 0), 0);
    assert_int_equal(kern_box_copy(&v, &u), 0);
    liq_coeffs(n, &c, &c2);
    assert_int_equal(kern_jacobi_ref(&v, &u, &rhs, c, c2), 0);
    assert_point(&v, 1, 1, 1, 47.0 / 96);
    assert_point(&v, 2, 2, 2, -1.0 / 96);
    kern_box_free(&u);
    kern_box_free(&v);
    kern_box_free(&rhs);
}

/*
 * Red-black Gauss-Seidel, rhs 0, colour = parity of the global coordinate
 * sum (the box's ghost corner is global (0,0,0)).  Corners (three odd
 * coordinates) and face centres are black (odd sum); edges and the centre
 * are red.  Red goes first, in place.
 * Iteration 1, red: edge (2 ghosts + corners 0 + faces 0)/6 = 1/3, centre 0.
 *   black: corner (3 + 3*1/3)/6 = 2/3; face (1 + 4*1/3 + centre 0)/6 = 7/18.
 * Iteration 2, red: edge (2 + 2*2/3 + 2*7/18)/6 = (37/9)/6 = 37/54;
 *   centre 6*(7/18)/6 = 7/18.
 *   black: corner (3 + 3*37/54)/6 = (273/54)/6 = 91/108;
 *   face (1 + 4*37/54 + 7/18)/6 = (223/54)/6 = 223/324.
 */
static void
test_liq_rbgs_oracle_by_hand(void **state)
{
    struct kern_box u, rhs;
    const int n[3] = { 3, 3, 3 };
    double c, c2;

    (void)state;
    hand_grid(&u, &rhs, 0);
    liq_coeffs(n, &c, &c2);
    assert_int_equal(kern_rbgs_ref(&u, &rhs, c, c2, KERN_RED), 0);
    assert_point(&u, 2, 1, 1, 1.0 / 3);
    assert_point(&u, 2, 2, 2, 0.0);
    assert_point(&u, 1, 1, 1, 0.0);                 /* black: not yet */
    assert_int_equal(kern_rbgs_ref(&u, &rhs, c, c2, KERN_BLACK), 0);
    assert_point(&u, 1, 1, 1, 2.0 / 3);
    assert_point(&u, 3, 1, 3, 2.0 / 3);
    assert_point(&u, 2, 2, 1, 7.0 / 18);
    assert_int_equal(kern_rbgs_ref(&u, &rhs, c, c2, KERN_RED), 0);
    assert_int_equal(kern_rbgs_ref(&u, &rhs, c, c2, KERN_BLACK), 0);
    assert_point(&u, 2, 1, 1, 37.0 / 54);
    assert_point(&u, 2, 2, 2, 7.0 / 18);
    assert_point(&u, 1, 1, 1, 91.0 / 108);
    assert_point(&u, 2, 2, 1, 223.0 / 324);
    assert_point(&u, 2, 3, 2, 223.0 / 324);
    kern_box_free(&u);
    kern_box_free(&rhs);
}

/* ---- liq_reference against an obvious implementation ---- */

#define NI 4
#define NJ 3
#define NK 2
typedef double grid_t[NK + 2][NJ + 2][NI + 2];

/* The oracle: plain arrays, the constants written out, no kernel code. */
static void
naive_iterations(grid_t u, const grid_t rhs, int rbgs, int iters)
{
    const double c = 1.0 / 6, h = 1.0 / (NI + 1), c2 = h * h;   /* max N = 4 */
    static grid_t old;

    for (int t = 0; t < iters; t++) {
        for (int colour = 0; colour < (rbgs ? 2 : 1); colour++) {
            memcpy(old, u, sizeof(old));
            for (int k = 1; k <= NK; k++)
                for (int j = 1; j <= NJ; j++)
                    for (int i = 1; i <= NI; i++) {
                        if (rbgs && (i + j + k) % 2 != colour)
                            continue;
                        /* Gauss-Seidel reads what this colour's sweep wrote:
                         * nothing of its own colour is a neighbour, so the
                         * copy taken before the colour is the same thing. */
                        double s = old[k][j][i - 1] + old[k][j][i + 1] + old[k][j - 1][i] +
                                   old[k][j + 1][i] + old[k - 1][j][i] + old[k + 1][j][i];

                        u[k][j][i] = c * (s - c2 * rhs[k][j][i]);
                    }
        }
    }
}

static void
check_reference(enum liq_kernel kernel, int iters)
{
    const int n[3] = { NI, NJ, NK };
    struct kern_box init, rhs, out;
    static grid_t u, r;

    assert_int_equal(kern_box_alloc(&init, NI, NJ, NK, 0, 0), 0);
    assert_int_equal(kern_box_alloc(&rhs, NI, NJ, NK, 0, 0), 0);
    liq_field_init(&init, &rhs, 42);    /* the data only: hashes of coordinates */
    for (int k = 0; k < NK + 2; k++)
        for (int j = 0; j < NJ + 2; j++)
            for (int i = 0; i < NI + 2; i++) {
                u[k][j][i] = *kern_at(&init, i, j, k);
                r[k][j][i] = *kern_at(&rhs, i, j, k);
            }
    naive_iterations(u, r, kernel == LIQ_RBGS, iters);
    assert_int_equal(liq_reference(n, kernel, iters, 42, &out), 0);
    for (int k = 0; k < NK + 2; k++)
        for (int j = 0; j < NJ + 2; j++)
            for (int i = 0; i < NI + 2; i++)
                assert_point(&out, i, j, k, u[k][j][i]);
    /* The oracle moved: the comparison is not of two copies of the start. */
    assert_true(fabs(u[1][1][1] - *kern_at(&init, 1, 1, 1)) > 1e-3);
    kern_box_free(&out);
    kern_box_free(&init);
    kern_box_free(&rhs);
}

static void
test_liq_reference_jacobi_matches_the_formula(void **state)
{
    (void)state;
    check_reference(LIQ_JACOBI, 1);
    check_reference(LIQ_JACOBI, 2);
}

static void
test_liq_reference_rbgs_matches_the_formula(void **state)
{
    (void)state;
    check_reference(LIQ_RBGS, 1);
    check_reference(LIQ_RBGS, 2);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_liq_coeffs_are_one_sixth_and_h_squared),
        cmocka_unit_test(test_liq_jacobi_oracle_by_hand),
        cmocka_unit_test(test_liq_jacobi_oracle_with_rhs),
        cmocka_unit_test(test_liq_rbgs_oracle_by_hand),
        cmocka_unit_test(test_liq_reference_jacobi_matches_the_formula),
        cmocka_unit_test(test_liq_reference_rbgs_matches_the_formula),
    };

    return cmocka_run_group_tests_name("liq_field", tests, NULL, NULL);
}
