FROM CarSensors CS PARTITION BY CS.car_id
DEFINE A AS CS.accel > 8 AT LEAST 5 s,
       B AS CS.speed > 70 BETWEEN 4 s AND 30 s,
       C AS CS.accel < -9 AT LEAST 3 s
PATTERN A meets B; A overlaps B; A starts B; A during B
        AND C during B; B finishes C; B overlaps C; B meets C
        AND A before C
WITHIN 5 min
RETURN first(B.car_id) AS id, avg(B.speed) AS avg_speed
