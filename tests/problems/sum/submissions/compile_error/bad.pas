program bad;
begin
  writeln(undefinedname)
end.
