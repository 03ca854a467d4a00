! fpvm3.h - the PVM 3.4 constants for Fortran programs, LiquidVM's own.
! Installed.  Include it in each program unit that calls libfpvm3:
!       include 'fpvm3.h'
! The names and values are PVM 3.4.6's (its fpvm3.h), the same as those
! of pvm3.h for C; tests/integ/test_pvm_fortran.sh checks them against
! PVM's header when it is installed.  It holds declarations only, in a
! form both fixed-form (.f) and free-form (.f90) sources accept.
! Link with libfpvm3 and libpvm3 (and libgpvm3 for groups), e.g.
!       gfortran prog.f $(pkg-config --cflags --libs libfpvm3)
! libfpvm3(3) lists the routines; each PVM call's man page gives the
! Fortran form.

! Spawn flags: pvmfspawn's flag is a sum of these (PVMHOST and the
! three after it are PVM 3.2's names for the same values).
      integer PVMTASKDEFAULT, PVMTASKHOST, PVMTASKARCH
      integer PVMTASKDEBUG, PVMTASKTRACE, PVMMPPFRONT
      integer PVMHOSTCOMPL, PVMNOSPAWNPARENT, PVMHOST, PVMARCH
      integer PVMDEBUG, PVMTRACE
      parameter (PVMTASKDEFAULT       =    0)
      parameter (PVMTASKHOST          =    1)
      parameter (PVMTASKARCH          =    2)
      parameter (PVMTASKDEBUG         =    4)
      parameter (PVMTASKTRACE         =    8)
      parameter (PVMMPPFRONT          =   16)
      parameter (PVMHOSTCOMPL         =   32)
      parameter (PVMNOSPAWNPARENT     =   64)
      parameter (PVMHOST              =    1)
      parameter (PVMARCH              =    2)
      parameter (PVMDEBUG             =    4)
      parameter (PVMTRACE             =    8)

! Message encodings: pvmfinitsend, pvmfmkbuf (PVMDEFAULT, PVMRAW and
! PVMINPLACE are the short names).
      integer PVMDATADEFAULT, PVMDATARAW, PVMDATAINPLACE
      integer PVMDATATRACE, PVMDEFAULT, PVMRAW, PVMINPLACE
      parameter (PVMDATADEFAULT       =    0)
      parameter (PVMDATARAW           =    1)
      parameter (PVMDATAINPLACE       =    2)
      parameter (PVMDATATRACE         =    4)
      parameter (PVMDEFAULT           =    0)
      parameter (PVMRAW               =    1)
      parameter (PVMINPLACE           =    2)

! Events for pvmfnotify, and the flag that cancels a request.
      integer PVMTASKEXIT, PVMHOSTDELETE, PVMHOSTADD, PVMROUTEADD
      integer PVMROUTEDELETE, PVMNOTIFYCANCEL
      parameter (PVMTASKEXIT          =    1)
      parameter (PVMHOSTDELETE        =    2)
      parameter (PVMHOSTADD           =    3)
      parameter (PVMROUTEADD          =    4)
      parameter (PVMROUTEDELETE       =    5)
      parameter (PVMNOTIFYCANCEL      =  256)

! Type codes: pvmfpack, pvmfunpack, pvmfpsend, pvmfprecv and the group
! collectives.  STRING packs nitem characters of a CHARACTER variable.
      integer STRING, BYTE1, INTEGER2, INTEGER4, REAL4, COMPLEX8
      integer REAL8, COMPLEX16, INTEGER8
      parameter (STRING               =    0)
      parameter (BYTE1                =    1)
      parameter (INTEGER2             =    2)
      parameter (INTEGER4             =    3)
      parameter (REAL4                =    4)
      parameter (COMPLEX8             =    5)
      parameter (REAL8                =    6)
      parameter (COMPLEX16            =    7)
      parameter (INTEGER8             =    8)

! Options for pvmfsetopt and pvmfgetopt (PVMS... are the task's own
! settings, the others those its children inherit).
      integer PVMROUTE, PVMDEBUGMASK, PVMAUTOERR, PVMOUTPUTTID
      integer PVMOUTPUTCODE, PVMTRACETID, PVMTRACECODE
      integer PVMTRACEBUFFER, PVMTRACEOPTIONS, PVMFRAGSIZE
      integer PVMRESVTIDS, PVMSOUTPUTTID, PVMSOUTPUTCODE
      integer PVMSTRACETID, PVMSTRACECODE, PVMSTRACEBUFFER
      integer PVMSTRACEOPTIONS, PVMSHOWTIDS, PVMPOLLTYPE
      integer PVMPOLLTIME, PVMOUTPUTCTX, PVMTRACECTX
      integer PVMSOUTPUTCTX, PVMSTRACECTX, PVMNORESET
      parameter (PVMROUTE             =    1)
      parameter (PVMDEBUGMASK         =    2)
      parameter (PVMAUTOERR           =    3)
      parameter (PVMOUTPUTTID         =    4)
      parameter (PVMOUTPUTCODE        =    5)
      parameter (PVMTRACETID          =    6)
      parameter (PVMTRACECODE         =    7)
      parameter (PVMTRACEBUFFER       =    8)
      parameter (PVMTRACEOPTIONS      =    9)
      parameter (PVMFRAGSIZE          =   10)
      parameter (PVMRESVTIDS          =   11)
      parameter (PVMSOUTPUTTID        =   12)
      parameter (PVMSOUTPUTCODE       =   13)
      parameter (PVMSTRACETID         =   14)
      parameter (PVMSTRACECODE        =   15)
      parameter (PVMSTRACEBUFFER      =   16)
      parameter (PVMSTRACEOPTIONS     =   17)
      parameter (PVMSHOWTIDS          =   18)
      parameter (PVMPOLLTYPE          =   19)
      parameter (PVMPOLLTIME          =   20)
      parameter (PVMOUTPUTCTX         =   21)
      parameter (PVMTRACECTX          =   22)
      parameter (PVMSOUTPUTCTX        =   23)
      parameter (PVMSTRACECTX         =   24)
      parameter (PVMNORESET           =   25)

! Values of some options: trace options, poll types, routing.
      integer PVMTRACEFULL, PVMTRACETIME, PVMTRACECOUNT
      integer PVMPOLLCONSTANT, PVMPOLLSLEEP, PVMDONTROUTE
      integer PVMALLOWDIRECT, PVMROUTEDIRECT
      parameter (PVMTRACEFULL         =    1)
      parameter (PVMTRACETIME         =    2)
      parameter (PVMTRACECOUNT        =    3)
      parameter (PVMPOLLCONSTANT      =    1)
      parameter (PVMPOLLSLEEP         =    2)
      parameter (PVMDONTROUTE         =    1)
      parameter (PVMALLOWDIRECT       =    2)
      parameter (PVMROUTEDIRECT       =    3)

! Mailbox flags: pvmfputinfo, pvmfrecvinfo, pvmfdelinfo (add them).
      integer PVMMBOXDEFAULT, PVMMBOXPERSISTENT
      integer PVMMBOXMULTIINSTANCE, PVMMBOXOVERWRITABLE
      integer PVMMBOXFIRSTAVAIL, PVMMBOXREADANDDELETE
      integer PVMMBOXWAITFORINFO
      parameter (PVMMBOXDEFAULT       =    0)
      parameter (PVMMBOXPERSISTENT    =    1)
      parameter (PVMMBOXMULTIINSTANCE =    2)
      parameter (PVMMBOXOVERWRITABLE  =    4)
      parameter (PVMMBOXFIRSTAVAIL    =    8)
      parameter (PVMMBOXREADANDDELETE =   16)
      parameter (PVMMBOXWAITFORINFO   =   32)

! Results: PvmOk, or the negative code of what went wrong
! (pvmfperror prints its text).
      integer PvmOk, PvmBadParam, PvmMismatch, PvmOverflow
      integer PvmNoData, PvmNoHost, PvmNoFile, PvmDenied, PvmNoMem
      integer PvmBadMsg, PvmSysErr, PvmNoBuf, PvmNoSuchBuf
      integer PvmNullGroup, PvmDupGroup, PvmNoGroup, PvmNotInGroup
      integer PvmNoInst, PvmHostFail, PvmNoParent, PvmNotImpl
      integer PvmDSysErr, PvmBadVersion, PvmOutOfRes, PvmDupHost
      integer PvmCantStart, PvmAlready, PvmNoTask, PvmNotFound
      integer PvmExists, PvmHostrNMstr, PvmParentNotSet
      integer PvmIPLoopback
      parameter (PvmOk                =    0)
      parameter (PvmBadParam          =   -2)
      parameter (PvmMismatch          =   -3)
      parameter (PvmOverflow          =   -4)
      parameter (PvmNoData            =   -5)
      parameter (PvmNoHost            =   -6)
      parameter (PvmNoFile            =   -7)
      parameter (PvmDenied            =   -8)
      parameter (PvmNoMem             =  -10)
      parameter (PvmBadMsg            =  -12)
      parameter (PvmSysErr            =  -14)
      parameter (PvmNoBuf             =  -15)
      parameter (PvmNoSuchBuf         =  -16)
      parameter (PvmNullGroup         =  -17)
      parameter (PvmDupGroup          =  -18)
      parameter (PvmNoGroup           =  -19)
      parameter (PvmNotInGroup        =  -20)
      parameter (PvmNoInst            =  -21)
      parameter (PvmHostFail          =  -22)
      parameter (PvmNoParent          =  -23)
      parameter (PvmNotImpl           =  -24)
      parameter (PvmDSysErr           =  -25)
      parameter (PvmBadVersion        =  -26)
      parameter (PvmOutOfRes          =  -27)
      parameter (PvmDupHost           =  -28)
      parameter (PvmCantStart         =  -29)
      parameter (PvmAlready           =  -30)
      parameter (PvmNoTask            =  -31)
      parameter (PvmNotFound          =  -32)
      parameter (PvmExists            =  -33)
      parameter (PvmHostrNMstr        =  -34)
      parameter (PvmParentNotSet      =  -35)
      parameter (PvmIPLoopback        =  -36)

! PVM 3.3's names of two mailbox results.  As in PVM 3.4's Fortran
! header, PvmDupEntry is PvmExists here (-33); C's pvm3.h makes it
! PvmDenied (-8).  3.4's calls return PvmExists and PvmNotFound.
      integer PvmNoEntry, PvmDupEntry
      parameter (PvmNoEntry           =  -32)
      parameter (PvmDupEntry          =  -33)
