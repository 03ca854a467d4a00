! fortran_api.f90 - every pvmf routine of libfpvm3 against the C API's
! results, for tests/integ/test_pvm_fortran.sh.  Built with our fpvm3.h and
! -lfpvm3 -lgpvm3 -lpvm3; the C calls it compares with are reached through
! bind(C) interfaces.  Started from the shell on a VM of two hosts or more
! whose spawn path holds this program (as fortran_api) and pvm_fecho, it
!   - checks identity, options, hosts, tasks and buffers against C;
!   - packs every type (integer*2/4/8, real*4/8, complex, double complex,
!     bytes, strings) in each encoding, sends it to itself and to the C
!     peer pvm_fecho (on another host), and checks the values that return;
!   - spawns a second copy of itself for the groups (join, barrier, bcast,
!     reduce with PvmSum and PvmMax, gather, scatter, freeze, leave);
!   - runs the mailbox, contexts, message handlers, notify, kill;
!   - checks bad input: a wrong type code, a too-short output string.
! It prints TAP lines ("ok N - what", "not ok N - what") and "# done N"
! last.  Spawned (it has a parent), it is the group partner.
module fapi_c
  use iso_c_binding
  implicit none
  interface
    integer(c_int) function pvm_mytid() bind(C, name='pvm_mytid')
      import :: c_int
    end function
    integer(c_int) function pvm_parent() bind(C, name='pvm_parent')
      import :: c_int
    end function
    integer(c_int) function pvm_getopt(what) bind(C, name='pvm_getopt')
      import :: c_int
      integer(c_int), value :: what
    end function
    integer(c_int) function pvm_tidtohost(tid) bind(C, name='pvm_tidtohost')
      import :: c_int
      integer(c_int), value :: tid
    end function
    integer(c_int) function pvm_archcode(arch) bind(C, name='pvm_archcode')
      import :: c_int, c_char
      character(kind=c_char) :: arch(*)
    end function
    integer(c_int) function pvm_mstat(host) bind(C, name='pvm_mstat')
      import :: c_int, c_char
      character(kind=c_char) :: host(*)
    end function
    integer(c_int) function pvm_pstat(tid) bind(C, name='pvm_pstat')
      import :: c_int
      integer(c_int), value :: tid
    end function
    integer(c_int) function pvm_getsbuf() bind(C, name='pvm_getsbuf')
      import :: c_int
    end function
    integer(c_int) function pvm_getrbuf() bind(C, name='pvm_getrbuf')
      import :: c_int
    end function
    integer(c_int) function pvm_bufinfo(b, bytes, tag, tid) bind(C, name='pvm_bufinfo')
      import :: c_int
      integer(c_int), value :: b
      integer(c_int) :: bytes, tag, tid
    end function
    integer(c_int) function pvm_getcontext() bind(C, name='pvm_getcontext')
      import :: c_int
    end function
    integer(c_int) function pvm_gsize(g) bind(C, name='pvm_gsize')
      import :: c_int, c_char
      character(kind=c_char) :: g(*)
    end function
    integer(c_int) function pvm_getinst(g, tid) bind(C, name='pvm_getinst')
      import :: c_int, c_char
      character(kind=c_char) :: g(*)
      integer(c_int), value :: tid
    end function
    integer(c_int) function pvm_gettid(g, inst) bind(C, name='pvm_gettid')
      import :: c_int, c_char
      character(kind=c_char) :: g(*)
      integer(c_int), value :: inst
    end function
    integer(c_int) function pvm_siblings(tids) bind(C, name='pvm_siblings')
      import :: c_int, c_ptr
      type(c_ptr) :: tids
    end function
    integer(c_int) function pvm_upkint(ip, n, s) bind(C, name='pvm_upkint')
      import :: c_int
      integer(c_int) :: ip(*)
      integer(c_int), value :: n, s
    end function
  end interface
end module fapi_c

module fapi_tap
  implicit none
  integer :: ntest = 0
  integer :: handled = 0
contains
  subroutine check(cond, what)
    logical, intent(in) :: cond
    character(*), intent(in) :: what
    ntest = ntest + 1
    if (cond) then
      write (*, '(a,i0,a,a)') 'ok ', ntest, ' - ', what
    else
      write (*, '(a,i0,a,a)') 'not ok ', ntest, ' - ', what
    end if
    flush (6)
  end subroutine
  subroutine checki(got, want, what)
    integer, intent(in) :: got, want
    character(*), intent(in) :: what
    character(40) :: s
    write (s, '(a,i0,a,i0,a)') ' (', got, ', want ', want, ')'
    call check(got == want, what // trim(s))
  end subroutine
end module fapi_tap

! The message handler pvmfaddmhf installs: counts its calls, checks mid.
integer function fapi_handler(mid)
  use fapi_tap, only: handled
  implicit none
  integer :: mid
  if (mid > 0) handled = handled + 1
  fapi_handler = 0
end function

! A user reduction function: elementwise maximum of integers.
subroutine fapi_maxint(datatype, x, y, num, info)
  implicit none
  integer :: datatype, num, info, i
  integer :: x(num), y(num)
  do i = 1, num
    if (y(i) > x(i)) x(i) = y(i)
  end do
  info = 0
  if (datatype /= 3) info = -2
end subroutine

! One type through the C peer: x goes out as n items of type what, y takes
! what comes back; compared byte for byte, and C's sum of the values with
! want.  External, so that any array may be passed as x and y.
subroutine roundtrip(ctid, what, n, x, y, want, lbl)
  use fapi_tap
  implicit none
  include 'fpvm3.h'
  integer, intent(in) :: ctid, what, n
  integer(1) :: x(*), y(*)
  real(8), intent(in) :: want
  character(*), intent(in) :: lbl
  integer :: b, info, w2, n2, sz
  real(8) :: sum
  select case (what)
  case (INTEGER2); sz = 2
  case (INTEGER4, REAL4); sz = 4
  case (INTEGER8, REAL8, COMPLEX8); sz = 8
  case default; sz = 16
  end select
  call pvmfinitsend(PVMDEFAULT, b)
  call pvmfpack(INTEGER4, what, 1, 1, info)
  call pvmfpack(INTEGER4, n, 1, 1, info)
  call pvmfpack(what, x, n, 1, info)
  call pvmfsend(ctid, 1, info)
  call pvmfrecv(ctid, 2, b)
  call pvmfunpack(INTEGER4, w2, 1, 1, info)
  call pvmfunpack(INTEGER4, n2, 1, 1, info)
  call pvmfunpack(what, y, n, 1, info)
  call pvmfunpack(REAL8, sum, 1, 1, info)
  call check(info == PvmOk .and. w2 == what .and. n2 == n .and. all(x(1:sz*n) == y(1:sz*n)), &
             'C peer: ' // lbl // ' round trip')
  call check(abs(sum - want) <= 1.0d-6 * max(1.0d0, abs(want)), &
             'C peer: C read the ' // lbl // ' values')
end subroutine

program fortran_api
  use fapi_c
  use fapi_tap
  implicit none
  include 'fpvm3.h'
  integer :: mytid, ptid, info, i
  call pvmfmytid(mytid)
  call pvmfparent(ptid)
  if (ptid > 0) then
    call partner(mytid, ptid)
    stop
  end if
  call checki(mytid, pvm_mytid(), 'pvmfmytid = pvm_mytid')
  call check(mytid > 0, 'enrolled')
  call checki(ptid, pvm_parent(), 'pvmfparent = pvm_parent (PvmNoParent from the shell)')
  call identity(mytid)
  call hosts_and_tasks(mytid)
  call buffers(mytid)
  call packing(mytid)
  call peer(mytid)
  call groups(mytid)
  call mailbox()
  call contexts_and_handlers(mytid)
  call bad_input()
  call pvmfexit(info)
  call checki(info, PvmOk, 'pvmfexit')
  write (*, '(a,i0)') '# done ', ntest

contains

  subroutine identity(mytid)
    integer, intent(in) :: mytid
    integer :: n, sib, dtid, cod, old, val, info, ntid
    call pvmfsiblings(n, 0, sib)
    call checki(n, pvm_siblings(c_null_ptr_holder()), 'pvmfsiblings count = pvm_siblings')
    call checki(sib, mytid, 'pvmfsiblings index 0 is itself (started from the shell)')
    sib = 12345
    call pvmfsiblings(n, -1, sib)
    call checki(sib, 12345, 'pvmfsiblings index -1 leaves sibling alone')
    call pvmfsiblings(n, 5, sib)
    call checki(sib, PvmNoTask, 'pvmfsiblings index out of range: PvmNoTask, as PVM 3.4.6')
    call pvmftidtohost(mytid, dtid)
    call checki(dtid, pvm_tidtohost(mytid), 'pvmftidtohost = pvm_tidtohost')
    call pvmftidtoh(mytid, ntid)
    call checki(ntid, dtid, 'pvmftidtoh (the man page name) = pvmftidtohost')
    call pvmfarchcode('LINUX64   ', cod)
    call checki(cod, pvm_archcode('LINUX64' // c_null_char), &
                'pvmfarchcode trims blanks = pvm_archcode')
    call pvmfgetopt(PVMROUTE, val)
    call checki(val, pvm_getopt(PVMROUTE), 'pvmfgetopt(PVMROUTE) = pvm_getopt')
    call pvmfsetopt(PVMAUTOERR, 0, old)
    call checki(old, 1, 'pvmfsetopt(PVMAUTOERR, 0) returns the old value')
    call checki(pvm_getopt(PvmAutoErr_c()), 0, 'and the C library sees it')
    call pvmfserror(1, old)
    call checki(old, 0, 'pvmfserror(1) returns the old PvmAutoErr')
    call pvmfserror(0, old)
    call pvmfadvise(PVMDONTROUTE, info)
    call checki(info, PvmOk, 'pvmfadvise(PVMDONTROUTE)')
    call checki(pvm_getopt(PVMROUTE), PVMDONTROUTE, 'pvmfadvise sets PvmRoute')
    call pvmfgetopt(99999, val)
    call checki(val, pvm_getopt(99999), 'pvmfgetopt of a bad option = C (PvmBadParam)')
    call pvmfperror('fortran_api: pvmfperror    ', info)
    call checki(info, PvmOk, 'pvmfperror')
    call pvmfsleep(0)
    call check(.true., 'pvmfsleep(0) returns')
    call pvmfstartpvmd('-d0 hostfile', 0, info)
    call checki(info, PvmDupHost, 'pvmfstartpvmd: PvmDupHost (a VM runs)')
    call pvmfhostsync(dtid, n, sib, val, old, info)
    call checki(info, PvmOk, 'pvmfhostsync of our own host')
    call check(sib >= 0 .and. sib <= 999999 .and. old >= 0 .and. old <= 999999, &
               'pvmfhostsync: microseconds in 0..999999')
    call check(val >= -1 .and. val <= 0, 'pvmfhostsync: one clock, delta within a second')
  end subroutine

  integer function PvmAutoErr_c()
    PvmAutoErr_c = PVMAUTOERR
  end function

  function c_null_ptr_holder() result(p)
    type(c_ptr) :: p
    p = c_null_ptr
  end function

  subroutine hosts_and_tasks(mytid)
    integer, intent(in) :: mytid
    integer :: nhost, narch, dtid, speed, info, i, n2, mine, ntask, tid, ptid, flag
    integer :: first, again, mstat
    character(64) :: name, arch, hname(8), aout
    character(2) :: tiny
    nhost = -1
    call pvmfconfig(nhost, narch, dtid, name, arch, speed, info)
    call checki(info, PvmOk, 'pvmfconfig')
    call check(nhost >= 2 .and. nhost <= 8, 'pvmfconfig: a VM of at least 2 hosts')
    call check(trim(arch) == 'LINUX64', 'pvmfconfig: arch LINUX64, blank-padded')
    call check(speed > 0 .and. dtid > 0, 'pvmfconfig: speed and dtid')
    first = dtid
    hname(1) = name
    mine = 0
    if (dtid == pvm_tidtohost(mytid)) mine = 1
    do i = 2, nhost
      call pvmfconfig(n2, narch, dtid, name, arch, speed, info)
      hname(i) = name
      if (dtid == pvm_tidtohost(mytid)) mine = mine + 1
    end do
    call checki(mine, 1, 'pvmfconfig cycles through every host once (its own host once)')
    call pvmfconfig(n2, narch, again, name, arch, speed, info)
    call checki(again, first, 'pvmfconfig starts over after the last host')
    call pvmfconfig(n2, narch, dtid, tiny, arch, speed, info)
    call checki(info, PvmBadParam, 'pvmfconfig: a too-short name string is PvmBadParam')
    call check(tiny == hname(2)(1:2), 'pvmfconfig: and holds what fits')
    call pvmfmstat(hname(1), mstat)
    call checki(mstat, pvm_mstat(trim(hname(1)) // c_null_char), 'pvmfmstat = pvm_mstat')
    call pvmfmstat('no-such-host', mstat)
    call checki(mstat, pvm_mstat('no-such-host' // c_null_char), &
                'pvmfmstat of an unknown host = pvm_mstat (PvmNoHost)')
    call pvmfaddhost(hname(1), info)
    call checki(info, PvmDupHost, 'pvmfaddhost of a host already there: PvmDupHost')
    call pvmfdelhost('no-such-host', info)
    call check(info < 0, 'pvmfdelhost of an unknown host fails')
    ntask = -1
    call pvmftasks(0, ntask, tid, ptid, dtid, flag, aout, info)
    call checki(info, PvmOk, 'pvmftasks(0)')
    mine = 0
    if (tid == mytid) mine = 1
    do i = 2, ntask
      call pvmftasks(0, n2, tid, ptid, dtid, flag, aout, info)
      if (tid == mytid) mine = mine + 1
      if (tid == mytid) call check(index(aout, 'fortran_api') > 0 .or. len_trim(aout) == 0, &
                                   'pvmftasks: its command, blank-padded')
    end do
    call checki(mine, 1, 'pvmftasks lists this task once per cycle')
    call pvmftasks(mytid, ntask, tid, ptid, dtid, flag, aout, info)
    call checki(tid, mytid, 'pvmftasks(mytid): itself')
    call checki(dtid, pvm_tidtohost(mytid), 'pvmftasks: its host')
    call pvmfpstat(mytid, info)
    call checki(info, pvm_pstat(mytid), 'pvmfpstat = pvm_pstat (PvmOk)')
    call pvmfcatchout(1, info)
    call checki(info, PvmOk, 'pvmfcatchout(1)')
    call pvmfcatchout(0, info)
    call checki(info, PvmOk, 'pvmfcatchout(0)')
  end subroutine

  subroutine buffers(mytid)
    integer, intent(in) :: mytid
    integer :: b1, b2, old, info, bytes, tag, tid, cb, ct, cs, v
    integer :: len, ctx, wid, enc, crc, src, dst
    call pvmfmkbuf(PVMDATADEFAULT, b1)
    call check(b1 > 0, 'pvmfmkbuf')
    call pvmfsetsbuf(b1, old)
    call pvmfgetsbuf(b2)
    call checki(b2, b1, 'pvmfsetsbuf / pvmfgetsbuf')
    call checki(pvm_getsbuf(), b1, 'pvm_getsbuf agrees')
    call pvmfpack(INTEGER4, 42, 1, 1, info)
    call pvmfbufinfo(b1, bytes, tag, tid, info)
    call checki(info, pvm_bufinfo(b1, cb, ct, cs), 'pvmfbufinfo = pvm_bufinfo')
    call checki(bytes, cb, 'pvmfbufinfo bytes = C')
    call pvmfsend(mytid, 7, info)
    call checki(info, PvmOk, 'pvmfsend to itself')
    do v = 1, 200
      call pvmfprobe(mytid, 7, b2)
      if (b2 /= 0) exit
      call pvmftrecv(-1, 12349, 0, 20000, old)
    end do
    call check(b2 > 0, 'pvmfprobe sees it')
    call pvmfrecv(mytid, 7, b2)
    call check(b2 > 0, 'pvmfrecv')
    call pvmfgetrbuf(old)
    call checki(old, pvm_getrbuf(), 'pvmfgetrbuf = pvm_getrbuf')
    call pvmfgetminfo(b2, len, ctx, tag, wid, enc, crc, src, dst, info)
    call checki(info, PvmOk, 'pvmfgetminfo')
    call checki(tag, 7, 'pvmfgetminfo tag')
    call checki(src, mytid, 'pvmfgetminfo src')
    call checki(ctx, pvm_getcontext(), 'pvmfgetminfo ctx')
    call pvmfunpack(INTEGER4, v, 1, 1, info)
    call checki(v, 42, 'the integer came back')
    call pvmfsetrbuf(0, old)
    call checki(old, b2, 'pvmfsetrbuf returns the old buffer')
    call pvmfsetrbuf(b2, old)
    call pvmfmkbuf(PVMDATADEFAULT, b1)
    call pvmfsetminfo(b1, ctx, 77, wid, src, dst, info)
    call checki(info, PvmOk, 'pvmfsetminfo')
    call pvmfgetminfo(b1, len, ctx, tag, wid, enc, crc, src, dst, info)
    call checki(tag, 77, 'pvmfsetminfo set the tag')
    call pvmffreebuf(b1, info)
    call checki(info, PvmOk, 'pvmffreebuf')
    call pvmffreebuf(b1, info)
    call checki(info, PvmNoSuchBuf, 'pvmffreebuf again: PvmNoSuchBuf')
    call pvmfnrecv(-1, 12345, b2)
    call checki(b2, 0, 'pvmfnrecv with nothing there: 0')
    call pvmftrecv(-1, 12345, 0, 20000, b2)
    call checki(b2, 0, 'pvmftrecv times out: 0')
    call pvmfinitsend(PVMRAW, b1)
    call pvmfpack(INTEGER4, 7, 1, 1, info)
    call pvmfsend(mytid, 8, info)
    call pvmftrecv(-1, 8, -1, 0, b2)
    call check(b2 > 0, 'pvmftrecv sec -1 waits like pvmfrecv')
    ! A message packed into another one.
    call pvmfinitsend(PVMDEFAULT, b1)
    call pvmfpack(INTEGER4, 99, 1, 1, info)
    call pvmfmkbuf(PVMDEFAULT, b2)
    call pvmfsetsbuf(b2, old)
    call pvmfpkmesg(b1, info)
    call checki(info, PvmOk, 'pvmfpkmesg')
    call pvmfpkmesgbody(b1, info)
    call checki(info, PvmOk, 'pvmfpkmesgbody')
    call pvmfsend(mytid, 9, info)
    call pvmfrecv(mytid, 9, b2)
    call pvmfupkmesg(b2, old)
    call check(old > 0, 'pvmfupkmesg gives a new buffer')
    call pvmfsetrbuf(old, b2)
    call pvmfunpack(INTEGER4, v, 1, 1, info)
    call checki(v, 99, 'the packed message holds its integer')
  end subroutine

  ! Every type: packed, sent to itself in each encoding, unpacked, compared.
  subroutine packing(mytid)
    integer, intent(in) :: mytid
    integer :: enc, e, info, b, k
    integer(2) :: i2(5), o2(5)
    integer(4) :: i4(5), o4(5)
    integer(8) :: i8(3), o8(3)
    real(4) :: r4(4), q4(4)
    real(8) :: r8(4), q8(4)
    complex(4) :: c8(3), d8(3)
    complex(8) :: c16(3), d16(3)
    integer(1) :: by(6), oy(6)
    character(12) :: s, t
    character(20) :: lbl
    integer :: strided(6), ostr(3)
    i2 = [1_2, -2_2, 32767_2, -32767_2 - 1_2, 0_2]
    i4 = [1, -1, 2147483647, -2147483647 - 1, 12345]
    i8 = [1_8, -2000000000_8, 2147483647_8]   ! XDR carries 32 bits
    r4 = [1.5, -0.25, 3.0e38, 1.0e-38]
    r8 = [1.0d0/3.0d0, -2.5d300, 4.9d-300, 0.0d0]
    c8 = [(1.0, -2.0), (0.5, 0.25), (-3.0e10, 7.0)]
    c16 = [cmplx(1.0d0/7.0d0, -2.0d100, kind=8), (0.0d0, 1.0d0), (-3.0d-200, 7.0d0)]
    by = [0_1, 1_1, -1_1, 127_1, -127_1 - 1_1, 65_1]
    s = 'pvm string  '
    strided = [1, 2, 3, 4, 5, 6]
    do e = 1, 3
      enc = e - 1
      write (lbl, '(a,i0,a)') 'encoding ', enc, ': '
      call pvmfinitsend(enc, b)
      call pvmfpack(INTEGER2, i2, 5, 1, info)
      call pvmfpack(INTEGER4, i4, 5, 1, info)
      call pvmfpack(INTEGER8, i8, 3, 1, info)
      call pvmfpack(REAL4, r4, 4, 1, info)
      call pvmfpack(REAL8, r8, 4, 1, info)
      call pvmfpack(COMPLEX8, c8, 3, 1, info)
      call pvmfpack(COMPLEX16, c16, 3, 1, info)
      call pvmfpack(BYTE1, by, 6, 1, info)
      call pvmfpack(INTEGER4, strided, 3, 2, info)
      call pvmfpack(STRING, s, 10, 1, info)
      call checki(info, PvmOk, trim(lbl) // ' everything packs')
      call pvmfsend(mytid, 20 + enc, info)
      call pvmfrecv(mytid, 20 + enc, b)
      o2 = 0; o4 = 0; o8 = 0; q4 = 0; q8 = 0; d8 = 0; d16 = 0; oy = 0; ostr = 0
      t = 'xxxxxxxxxxxx'
      call pvmfunpack(INTEGER2, o2, 5, 1, info)
      call check(all(o2 == i2), trim(lbl) // ' integer*2')
      call pvmfunpack(INTEGER4, o4, 5, 1, info)
      call check(all(o4 == i4), trim(lbl) // ' integer*4')
      call pvmfunpack(INTEGER8, o8, 3, 1, info)
      call check(all(o8 == i8), trim(lbl) // ' integer*8')
      call pvmfunpack(REAL4, q4, 4, 1, info)
      call check(all(q4 == r4), trim(lbl) // ' real*4')
      call pvmfunpack(REAL8, q8, 4, 1, info)
      call check(all(q8 == r8), trim(lbl) // ' real*8')
      call pvmfunpack(COMPLEX8, d8, 3, 1, info)
      call check(all(d8 == c8), trim(lbl) // ' complex')
      call pvmfunpack(COMPLEX16, d16, 3, 1, info)
      call check(all(d16 == c16), trim(lbl) // ' double complex')
      call pvmfunpack(BYTE1, oy, 6, 1, info)
      call check(all(oy == by), trim(lbl) // ' bytes')
      call pvmfunpack(INTEGER4, ostr, 3, 1, info)
      if (enc /= PVMDATAINPLACE) &
        call check(all(ostr == [1, 3, 5]), trim(lbl) // ' stride 2 packs every other item')
      call pvmfunpack(STRING, t, 10, 1, info)
      call checki(info, PvmOk, trim(lbl) // ' string unpacks')
      call check(t == 'pvm string' // 'xx', trim(lbl) // ' string: 10 characters, the rest untouched')
      call pvmfunpack(INTEGER4, o4, 1, 1, info)
      call checki(info, PvmNoData, trim(lbl) // ' past the end: PvmNoData')
    end do
    ! psend / precv of each numeric type.
    call pvmfpsend(mytid, 30, r8, 4, REAL8, info)
    call checki(info, PvmOk, 'pvmfpsend REAL8')
    q8 = 0
    call pvmfprecv(mytid, 30, q8, 4, REAL8, e, k, b, info)
    call checki(info, PvmOk, 'pvmfprecv REAL8')
    call check(all(q8 == r8) .and. e == mytid .and. k == 30, 'pvmfprecv: values, tid and tag')
    call check(b == 4 .or. b == 32, 'pvmfprecv: the length')
    call pvmfinitsend(PVMDEFAULT, b)
    call pvmfpack(INTEGER8, 9000000000_8, 1, 1, info)
    call checki(info, PvmOverflow, 'INTEGER8 beyond 32 bits in XDR: PvmOverflow, as pvm_pklong')
    call pvmfpsend(mytid, 31, s, 12, STRING, info)
    t = ' '
    call pvmfprecv(mytid, 31, t, 12, STRING, e, k, b, info)
    call check(info == PvmOk .and. t == s, 'pvmfpsend/pvmfprecv STRING')
  end subroutine

  ! Every type through the C peer pvm_fecho on another host.
  subroutine peer(mytid)
    integer, intent(in) :: mytid
    integer :: tids(1), numt, info, b, what, n, me, dtid, ptid, flag, ntask
    character(64) :: where, aout, arch
    integer :: nhost, narch, speed, ctid
    integer(2) :: i2(3), o2(3)
    integer :: i4(3), o4(3)
    integer(8) :: i8(2), o8(2)
    real(4) :: r4(2), q4(2)
    real(8) :: r8(2), q8(2), sum
    complex(4) :: c8(2), d8(2)
    complex(8) :: c16(2), d16(2)
    character(8) :: s, t
    ! A host that is not this one.
    nhost = -1
    where = ' '
    do me = 1, 8
      call pvmfconfig(nhost, narch, dtid, aout, arch, speed, info)
      if (dtid /= pvm_tidtohost(mytid)) where = aout
      if (me >= nhost) exit
    end do
    call pvmfspawn('pvm_fecho', PVMTASKHOST, where, 1, tids, numt)
    call checki(numt, 1, 'pvmfspawn the C peer on host ' // trim(where))
    if (numt /= 1) return
    ctid = tids(1)
    call check(pvm_tidtohost(ctid) /= pvm_tidtohost(mytid), 'the peer runs on another host')
    call pvmfnotify(PVMTASKEXIT, 55, 1, tids, info)
    call checki(info, PvmOk, 'pvmfnotify(PVMTASKEXIT)')
    i2 = [7_2, -8_2, 300_2]; i4 = [100000, -5, 7]; i8 = [2000000000_8, -3_8]
    r4 = [0.5, 2.25]; r8 = [1.0d10, -0.125d0]
    c8 = [(1.0, 2.0), (3.0, -4.0)]; c16 = [(0.5d0, 1.5d0), (-2.0d0, 8.0d0)]
    s = 'Fortran '
    call roundtrip(ctid, INTEGER2, 3, i2, o2, 8.0d0*0 + 299.0d0, 'integer*2')
    call roundtrip(ctid, INTEGER4, 3, i4, o4, 100002.0d0, 'integer*4')
    call roundtrip(ctid, INTEGER8, 2, i8, o8, 1999999997.0d0, 'integer*8')
    call roundtrip(ctid, REAL4, 2, r4, q4, 2.75d0, 'real*4')
    call roundtrip(ctid, REAL8, 2, r8, q8, 1.0d10 - 0.125d0, 'real*8')
    call roundtrip(ctid, COMPLEX8, 2, c8, d8, 2.0d0, 'complex')
    call roundtrip(ctid, COMPLEX16, 2, c16, d16, 8.0d0, 'double complex')
    ! The string: 7 characters as bytes, which C reads with pvm_upkbyte.
    call pvmfinitsend(PVMDEFAULT, b)
    call pvmfpack(INTEGER4, STRING, 1, 1, info)
    call pvmfpack(INTEGER4, 7, 1, 1, info)
    call pvmfpack(STRING, s, 7, 1, info)
    call pvmfmcast(1, tids, 1, info)
    call checki(info, PvmOk, 'pvmfmcast to the C peer')
    call pvmfrecv(ctid, 2, b)
    call pvmfunpack(INTEGER4, what, 1, 1, info)
    call pvmfunpack(INTEGER4, n, 1, 1, info)
    t = '........'
    call pvmfunpack(STRING, t, n, 1, info)
    call pvmfunpack(REAL8, sum, 1, 1, info)
    call check(what == STRING .and. n == 7 .and. t == 'Fortran.', 'C peer: string round trip')
    call checki(int(sum), 70+111+114+116+114+97+110, 'C peer: C read the string''s bytes')
    ! Stop it; the notify arrives.
    call pvmfinitsend(PVMDEFAULT, b)
    call pvmfsend(ctid, 99, info)
    call pvmftrecv(-1, 55, 20, 0, b)
    call check(b > 0, 'pvmfnotify: the exit notice arrives')
    if (b > 0) then
      call pvmfunpack(INTEGER4, n, 1, 1, info)
      call checki(n, ctid, 'the notice names the peer')
    end if
    ! pvmfkill and pvmfsendsig on another one.
    call pvmfspawn('pvm_fecho', PVMDEFAULT, '*', 1, tids, numt)
    call checki(numt, 1, 'pvmfspawn where ''*''')
    call pvmfsendsig(tids(1), 18, info)
    call checki(info, PvmOk, 'pvmfsendsig SIGCONT')
    call pvmfkill(tids(1), info)
    call checki(info, PvmOk, 'pvmfkill')
    do me = 1, 100
      call pvmfpstat(tids(1), info)
      if (info /= PvmOk) exit
      call pvmftrecv(-1, 12346, 0, 50000, b)
    end do
    call checki(info, PvmNoTask, 'pvmfpstat after the kill: PvmNoTask')
    call pvmfspawn('no-such-program', PVMDEFAULT, '*', 1, tids, numt)
    call check(numt < 1 .and. tids(1) < 0, 'pvmfspawn of a missing program: an error in tids')
  end subroutine

  ! Groups with a second copy of this program.
  subroutine groups(mytid)
    integer, intent(in) :: mytid
    integer :: inum, info, tids(1), numt, size, tid, b, v, i
    integer :: vals(3), res(6), part(3), scat(2)
    external PvmSum, PvmMax, fapi_maxint
    call pvmfjoingroup('fapi grp  ', inum)
    call checki(inum, 0, 'pvmfjoingroup: instance 0')
    call pvmfjoingroup('fapi grp', info)
    call checki(info, PvmDupGroup, 'pvmfjoingroup again: PvmDupGroup')
    call pvmfspawn('fortran_api', PVMDEFAULT, '*', 1, tids, numt)
    call checki(numt, 1, 'pvmfspawn a copy of itself')
    if (numt /= 1) return
    call pvmffreezegroup('fapi grp', 2, info)
    call check(info >= 0, 'pvmffreezegroup at 2 members (not an error)')
    call pvmfgsize('fapi grp', size)
    call checki(size, pvm_gsize('fapi grp' // c_null_char), 'pvmfgsize = pvm_gsize')
    call checki(size, 2, 'the group has 2 members')
    call pvmfgettid('fapi grp', 1, tid)
    call checki(tid, tids(1), 'pvmfgettid(1) is the copy')
    call checki(tid, pvm_gettid('fapi grp' // c_null_char, 1), 'pvmfgettid = pvm_gettid')
    call pvmfgetinst('fapi grp', tids(1), inum)
    call checki(inum, pvm_getinst('fapi grp' // c_null_char, tids(1)), 'pvmfgetinst = pvm_getinst')
    call pvmfbarrier('fapi grp', 2, info)
    call checki(info, PvmOk, 'pvmfbarrier')
    call pvmfinitsend(PVMDEFAULT, b)
    call pvmfpack(INTEGER4, 1234, 1, 1, info)
    call pvmfbcast('fapi grp', 41, info)
    call checki(info, PvmOk, 'pvmfbcast')
    call pvmfrecv(tids(1), 42, b)
    call pvmfunpack(INTEGER4, v, 1, 1, info)
    call checki(v, 1235, 'the copy got the broadcast')
    vals = [1, 20, 300]
    call pvmfreduce(PvmSum, vals, 3, INTEGER4, 43, 'fapi grp', 0, info)
    call checki(info, PvmOk, 'pvmfreduce PvmSum')
    call check(all(vals == [1 + 10, 20 + 10, 300 + 10]), 'pvmfreduce PvmSum: the sums at the root')
    vals = [5, 1, 9]
    call pvmfreduce(PvmMax, vals, 3, INTEGER4, 44, 'fapi grp', 0, info)
    call check(info == PvmOk .and. all(vals == [10, 10, 10]), 'pvmfreduce PvmMax')
    vals = [50, 1, 9]
    call pvmfreduce(fapi_maxint, vals, 3, INTEGER4, 45, 'fapi grp', 0, info)
    call check(info == PvmOk .and. all(vals == [50, 10, 10]), 'pvmfreduce with a Fortran function')
    part = [7, 8, 9]
    res = 0
    call pvmfgather(res, part, 3, INTEGER4, 46, 'fapi grp', 0, info)
    call check(info == PvmOk .and. all(res == [7, 8, 9, 70, 80, 90]), 'pvmfgather')
    res = [1, 2, 3, 4, 5, 6]
    scat = 0
    call pvmfscatter(scat, res, 2, INTEGER4, 47, 'fapi grp', 0, info)
    call check(info == PvmOk .and. all(scat == [1, 2]), 'pvmfscatter: the root''s part')
    call pvmfrecv(tids(1), 48, b)
    call pvmfunpack(INTEGER4, scat, 2, 1, info)
    call check(all(scat == [3, 4]), 'pvmfscatter: the copy''s part')
    call pvmfgather(res, part, 3, STRING, 49, 'fapi grp', 0, info)
    call checki(info, PvmBadParam, 'pvmfgather of STRING: PvmBadParam')
    call pvmfbarrier('fapi grp', 2, info)
    call pvmflvgroup('fapi grp', info)
    call checki(info, PvmOk, 'pvmflvgroup')
    call pvmflvgroup('fapi grp', info)
    call check(info == PvmNotInGroup .or. info == PvmNoGroup, 'pvmflvgroup again: not in group')
    call pvmfgsize('          ', size)
    call checki(size, PvmNullGroup, 'a blank group name: PvmNullGroup')
    do i = 1, 100
      call pvmfpstat(tids(1), info)
      if (info /= PvmOk) exit
      call pvmftrecv(-1, 12347, 0, 50000, b)
    end do
    call checki(info, PvmNoTask, 'the copy has exited')
  end subroutine

  subroutine mailbox()
    integer :: b, info, idx, b2, v, nclasses, nentries, ind(8), own(8), flg(8), seen
    character(40) :: name
    call pvmfinitsend(PVMDEFAULT, b)
    call pvmfpack(INTEGER4, 4711, 1, 1, info)
    call pvmfputinfo('fapi box  ', b, PVMMBOXDEFAULT, idx)
    call checki(idx, 0, 'pvmfputinfo: index 0')
    call pvmfrecvinfo('fapi box', 0, PVMMBOXDEFAULT, b2)
    call check(b2 > 0, 'pvmfrecvinfo')
    call pvmfsetrbuf(b2, info)
    call pvmfunpack(INTEGER4, v, 1, 1, info)
    call checki(v, 4711, 'the mailbox entry holds its integer')
    seen = 0
    info = -1
    do
      call pvmfgetmboxinfo('fapi*', name, nclasses, nentries, ind, own, flg, info)
      if (info /= PvmOk) exit
      if (name == 'fapi box') seen = seen + 1
      if (name == 'fapi box') call check(nentries == 1 .and. ind(1) == 0 .and. &
                                         own(1) == pvm_mytid(), 'pvmfgetmboxinfo: entry, owner')
    end do
    call checki(seen, 1, 'pvmfgetmboxinfo lists the class once')
    call checki(info, PvmNotFound, 'pvmfgetmboxinfo ends with PvmNotFound')
    call pvmfdelinfo('fapi box', 0, PVMMBOXDEFAULT, info)
    call checki(info, PvmOk, 'pvmfdelinfo')
    call pvmfrecvinfo('fapi box', 0, PVMMBOXDEFAULT, b2)
    call checki(b2, PvmNotFound, 'pvmfrecvinfo after delinfo: PvmNotFound')
  end subroutine

  subroutine contexts_and_handlers(mytid)
    integer, intent(in) :: mytid
    integer :: ctx, old, cur, info, mhid, b, i
    integer, external :: fapi_handler
    call pvmfgetcontext(cur)
    call checki(cur, pvm_getcontext(), 'pvmfgetcontext = pvm_getcontext')
    call pvmfnewcontext(ctx)
    call check(ctx > 0 .and. ctx /= cur, 'pvmfnewcontext')
    call pvmfsetcontext(ctx, old)
    call checki(old, cur, 'pvmfsetcontext returns the old context')
    call checki(pvm_getcontext(), ctx, 'and C sees the new one')
    call pvmfsetcontext(cur, old)
    call pvmffreecontext(ctx, info)
    call checki(info, PvmOk, 'pvmffreecontext')
    call pvmfaddmhf(-1, 77, cur, fapi_handler, mhid)
    call check(mhid >= 0, 'pvmfaddmhf')
    call pvmfinitsend(PVMDEFAULT, b)
    call pvmfsend(mytid, 77, info)
    do i = 1, 100
      if (handled > 0) exit
      call pvmftrecv(-1, 12348, 0, 20000, b)
    end do
    call checki(handled, 1, 'the Fortran handler ran once, with a message id')
    call pvmfdelmhf(mhid, info)
    call checki(info, PvmOk, 'pvmfdelmhf')
    call pvmfdelmhf(mhid, info)
    call check(info < 0, 'pvmfdelmhf again fails')
  end subroutine

  subroutine bad_input()
    integer :: info, v(2)
    character(3) :: short
    call pvmfinitsend(PVMDEFAULT, info)
    call pvmfpack(99, v, 1, 1, info)
    call checki(info, PvmBadParam, 'pvmfpack with type code 99: PvmBadParam')
    call pvmfpack(-1, v, 1, 1, info)
    call checki(info, PvmBadParam, 'pvmfpack with type code -1: PvmBadParam')
    call pvmfunpack(42, v, 1, 1, info)
    call checki(info, PvmBadParam, 'pvmfunpack with type code 42: PvmBadParam')
    call pvmfpack(STRING, 'abcdefgh', 8, 1, info)
    call pvmfsend(pvm_mytid(), 60, info)
    call pvmfrecv(-1, 60, info)
    short = 'zzz'
    call pvmfunpack(STRING, short, 8, 1, info)
    call checki(info, PvmBadParam, 'pvmfunpack STRING of 8 into character*3: PvmBadParam')
    call check(short == 'zzz', 'and the string is untouched')
    call pvmfpack(STRING, short, 4, 1, info)
    call checki(info, PvmBadParam, 'pvmfpack STRING of 4 from character*3: PvmBadParam')
    call pvmfpack(INTEGER4, v, -1, 1, info)
    call check(info < 0, 'pvmfpack of -1 items fails')
    call pvmfpsend(pvm_mytid(), 61, v, 1, 99, info)
    call checki(info, PvmBadParam, 'pvmfpsend with type code 99: PvmBadParam')
    call pvmftrecv(-1, 61, -5, 0, info)
    call checki(info, 0, 'pvmftrecv with sec -5 polls (0), as PVM 3.4.6 and pvm_trecv')
    call pvmftrecv(-1, 61, 0, -1, info)
    call checki(info, 0, 'pvmftrecv with usec -1 polls (0)')
  end subroutine

  ! The spawned copy: the other member of the group.
  subroutine partner(mytid, ptid)
    integer, intent(in) :: mytid, ptid
    integer :: inum, info, b, v, vals(3), part(3), res(6), scat(2)
    external PvmSum, PvmMax, fapi_maxint
    call pvmfjoingroup('fapi grp', inum)
    call pvmffreezegroup('fapi grp', 2, info)
    call pvmfbarrier('fapi grp', 2, info)
    call pvmfrecv(-1, 41, b)
    call pvmfunpack(INTEGER4, v, 1, 1, info)
    call pvmfinitsend(PVMDEFAULT, b)
    call pvmfpack(INTEGER4, v + 1, 1, 1, info)
    call pvmfsend(ptid, 42, info)
    vals = [10, 10, 10]
    call pvmfreduce(PvmSum, vals, 3, INTEGER4, 43, 'fapi grp', 0, info)
    vals = [10, 10, 10]
    call pvmfreduce(PvmMax, vals, 3, INTEGER4, 44, 'fapi grp', 0, info)
    vals = [10, 10, 10]
    call pvmfreduce(fapi_maxint, vals, 3, INTEGER4, 45, 'fapi grp', 0, info)
    part = [70, 80, 90]
    call pvmfgather(res, part, 3, INTEGER4, 46, 'fapi grp', 0, info)
    call pvmfscatter(scat, res, 2, INTEGER4, 47, 'fapi grp', 0, info)
    call pvmfinitsend(PVMDEFAULT, b)
    call pvmfpack(INTEGER4, scat, 2, 1, info)
    call pvmfsend(ptid, 48, info)
    call pvmfbarrier('fapi grp', 2, info)
    call pvmflvgroup('fapi grp', info)
    call pvmfexit(info)
    if (mytid < 0) print *, 'unreachable'
  end subroutine
end program
